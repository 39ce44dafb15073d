#!/usr/bin/env bash
# Regenerates the CI baseline report (default reports/baselines/lavapipe-quick.json):
# runs the quick preset RUNS times (default 3) on lavapipe and keeps, case by
# case, the run whose median is the median of the runs' medians (CPU-time
# medians, which the CI gate compares, where the report has them), so that one
# run disturbed by a busy machine does not become the yardstick. Every case
# must be ok (validated) in every run; otherwise nothing is written.
#
#   scripts/make-baseline.sh [OUT.json]
#   env: PEBENCH (default build/pebench), RUNS (default 3), PRESET (default quick),
#        MIN_TIME (Google Benchmark min time per case in seconds; default: the
#        preset's, as CI runs it), VK_DRIVER_FILES (default lavapipe's ICD)
#
# Regenerate it whenever the quick preset's cases change (a variant lands) or
# the code is meant to get faster or slower; see docs/compare-and-gate.md.
# lavapipe's times hold for the host CPU that ran them: a baseline for
# another CPU is made on that CPU as a sibling, e.g.
#   scripts/make-baseline.sh reports/baselines/lavapipe-quick.intel-6-207.json
# and scripts/ci-gate.sh takes the one made on its own host. The other
# hosts' baselines keep their times; the script names them at the end.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-reports/baselines/lavapipe-quick.json}
pebench=${PEBENCH:-build/pebench}
runs=${RUNS:-3}
preset=${PRESET:-quick}
extra=()
[[ -n ${MIN_TIME:-} ]] && extra+=("--benchmark_min_time=$MIN_TIME")
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}

[[ -x $pebench ]] || { echo "make-baseline: $pebench not found; build first (cmake --build build)" >&2; exit 2; }
(( runs >= 1 )) || { echo "make-baseline: RUNS=$runs must be at least 1" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
loads=()  # the 1-minute load average as each run starts: how busy the machine was
for ((i = 1; i <= runs; i++)); do
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  echo "make-baseline: run $i of $runs (load average ${loads[-1]})" >&2
  "$pebench" run --preset "$preset" ${extra[@]+"${extra[@]}"} --out "$tmp/run$i.json" >"$tmp/run$i.log" 2>&1 ||
    { cat "$tmp/run$i.log" >&2; echo "make-baseline: run $i failed" >&2; exit 1; }
done

# The commit whose code made the runs: the A/B gate (scripts/ab-gate.sh)
# builds it. None where the code differs from HEAD (a dirty tree).
commit=$(git rev-parse HEAD 2>/dev/null || true)
if [[ -n $commit ]] && ! git diff --quiet HEAD -- src shaders cmake CMakeLists.txt 2>/dev/null; then
  echo "make-baseline: the code differs from HEAD: no baseline.commit recorded (scripts/ab-gate.sh needs one)" >&2
  commit=
fi

BASE_COMMIT="$commit" LOADS="${loads[*]}" python3 - "$out" "$tmp"/run*.json <<'PY'
import json, os, sys

out, paths = sys.argv[1], sys.argv[2:]
runs = [json.load(open(p)) for p in paths]
for path, run in zip(paths, runs):
    if run.get("run", {}).get("inject_slowdown"):
        sys.exit(f"make-baseline: {path} was made with --inject-slowdown: a fault-injection run is never a baseline")

def key(r):
    return json.dumps([r["device"], r["variant"], r["impl"], r["dtype"], r["params"]], sort_keys=True)

merged = dict(runs[0])
results = []
for first in runs[0]["results"]:
    k = key(first)
    same = [r for run in runs for r in run["results"] if key(r) == k]
    if len(same) != len(runs):
        sys.exit(f"make-baseline: {first['id']} is missing from some runs")
    bad = [r for r in same if r["status"] != "ok"]
    if bad:
        sys.exit(f"make-baseline: {first['id']} is {bad[0]['status']} ({bad[0]['reason']}): fix it before baselining")
    same.sort(key=lambda r: (r.get("cpu_ns") or r["time_ns"])["median"])
    results.append(same[len(same) // 2])
merged["results"] = results
merged["baseline"] = {"runs": len(runs), "selection": "per case, the run with the median median (CPU time)",
                      "created": [r["created"] for r in runs],
                      "load_average_at_start": [float(x) for x in os.environ["LOADS"].split()]}
if os.environ.get("BASE_COMMIT"):
    merged["baseline"]["commit"] = os.environ["BASE_COMMIT"]
os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
with open(out + ".tmp", "w") as f:
    json.dump(merged, f, indent=1)
    f.write("\n")
os.replace(out + ".tmp", out)
print(f"make-baseline: wrote {out}: {len(results)} cases from {len(runs)} runs on "
      f"{merged.get('host', {}).get('cpu_id') or merged.get('host', {}).get('cpu', 'an unknown CPU')}", file=sys.stderr)
PY

# Baselines of the same family made on other CPUs (NAME.json, NAME.TAG.json):
# this run cannot regenerate them.
dir=$(dirname "$out") name=$(basename "$out" .json)
others=()
for f in "$dir/${name%%.*}.json" "$dir/${name%%.*}".*.json; do
  [[ -f $f && $f != "$dir/$name.json" ]] && others+=("$f")
done
if ((${#others[@]})); then
  echo "make-baseline: the baselines of other host CPUs keep their old times: ${others[*]}" >&2
  echo "make-baseline: if this change moves times, delete them (CI on those CPUs then gates correctness only)" >&2
fi

#!/usr/bin/env python3
"""Google Benchmark's compare.py agrees with `pebench compare` on the same runs.

Runs a few cases twice with --benchmark_out, then compares the two GB files
with compare.py (Debian's libbenchmark-tools) and the two reports with
`pebench compare --format json`: for every case, compare.py's change of the
median aggregate must be pebench's median ratio minus one, since both come
from the same samples. (Their U test p-values agree only where both use the
normal approximation: scipy's is exact below 8 samples, pebench's up to 50.)
Nothing here depends on how fast anything ran.

Usage: test_compare_py.py PEBENCH WORKDIR. Exit 77 (skipped) without
compare.py or scipy.
"""
import importlib.util
import json
import os
import subprocess
import sys

COMPARE_PY = "/usr/share/benchmark/compare.py"


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def main():
    exe, work = sys.argv[1], sys.argv[2]
    if not os.path.exists(COMPARE_PY):
        skip(f"{COMPARE_PY} not found (apt-get install libbenchmark-tools)")
    if importlib.util.find_spec("scipy") is None:
        skip("compare.py needs scipy (apt-get install python3-scipy)")
    os.makedirs(work, exist_ok=True)
    for i in (1, 2):
        subprocess.run([exe, "run", "--no-peak", "--quiet", "--variant", "abs.learned,rope.apply",
                        "--seq", "16,256", "--dtype", "f32", "--benchmark_min_time=0.05",
                        f"--benchmark_out={work}/gb{i}.json", "--out", f"{work}/r{i}.json"],
                       check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, COMPARE_PY, "-d", f"{work}/diff.json", "benchmarks",
                    f"{work}/gb1.json", f"{work}/gb2.json"], check=True, stdout=subprocess.DEVNULL)
    gb = {d["name"]: d for d in json.load(open(f"{work}/diff.json"))}
    ours = json.loads(subprocess.run([exe, "compare", "--format", "json", f"{work}/r1.json", f"{work}/r2.json"],
                                     check=True, capture_output=True, text=True).stdout)
    names = {r["id"]: r["benchmark"] for r in json.load(open(f"{work}/r1.json"))["results"]}
    cases = ours_cases(ours)
    assert len(cases) == 4, f"expected 4 matched cases, got {len(cases)}"
    for c in cases:
        name = names[c["base_id"]]
        median = gb[name + "_median"]["measurements"][0]
        want = c["ratio"] - 1
        assert abs(median["time"] - want) < 1e-9, f"{name}: compare.py {median['time']:+.6f}, pebench {want:+.6f}"
        print(f"{name}: median change {median['time']:+.4f} in both")
    print("compare.py agrees with pebench compare")


def ours_cases(ours):
    """The matched cases of pebench compare's JSON: base id, median ratio, p."""
    out = []
    for pair in ours["comparisons"]:
        for c in pair["cases"]:
            if c.get("ratio") is not None:
                out.append({"base_id": c["id"], "ratio": c["ratio"], "p_value": c.get("p_value")})
    return out


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# tools/instr_count.py on a committed callgrind sample (tests/data/
# instr_count_abs.callgrind, trimmed from a real lavapipe run): the parser
# finds the compiled shader's entry under lavapipe's dispatch function, its
# calls and own instruction count, and maps it onto the report's pipeline;
# compare passes equal counts, flags (exit 1) a kernel that executes 5% more,
# and exits 2 with one line on a file that is not a counts file.
#   tests/instr_count_test.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=$1 work=$2
tool=$src/tools/instr_count.py
data=$src/tests/data
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
py() { /usr/bin/python3 "$@"; }

py "$tool" parse "$data/instr_count_abs.callgrind" --report "$data/instr_count_abs.report.json" >"$work/rec.json" ||
  fail "parse exited $?"
py - "$work/rec.json" <<'PY' || fail "parse: wrong entry (above)"
import json, sys
r = json.load(open(sys.argv[1]))
want = {"dispatcher": "libvulkan_lvp.so:0x00000000002996f0", "dispatches": 3, "ir_per_run": 3001600.0}
got = {k: r.get(k) for k in want}
e = r["entries"]
ok = got == want and len(e) == 1 and {k: e[0].get(k) for k in ("address", "calls", "ir", "ir_per_call", "ir_inclusive", "shader", "workgroups")} == {
    "address": "0x000000000483c000", "calls": 48, "ir": 84624 + 8918640 + 1536, "ir_per_call": 187600.0,
    "ir_inclusive": 9046033, "shader": "abs_learned", "workgroups": 16}
if not ok:
    print(json.dumps(r, indent=1))
sys.exit(0 if ok else 1)
PY

# Without the report: the entry still, per workgroup, no mapping.
py "$tool" parse "$data/instr_count_abs.callgrind" >"$work/norep.json" || fail "parse without a report exited $?"
grep -q '"ir_per_call": 187600.0' "$work/norep.json" || fail "parse without a report: $(cat "$work/norep.json")"

# 47 calls: not a whole number of 16-workgroup dispatches, so no per-run count.
sed 's/^calls=48 0 $/calls=47 0 /' "$data/instr_count_abs.callgrind" >"$work/odd.callgrind"
py "$tool" parse "$work/odd.callgrind" --report "$data/instr_count_abs.report.json" >"$work/odd.json" || fail "parse odd"
grep -q '"unmapped": ".*47 calls, not a multiple of abs_learned.s 16 workgroups"' "$work/odd.json" ||
  fail "47 calls mapped anyway: $(grep -E 'unmapped|per_run' "$work/odd.json")"

# Several pipelines: entries map by their calls, not by address order (a
# decode's combine got the lower address), and a pipeline a pre-pass
# dispatches twice a run (FIRE's pack) still maps; calls that fit no
# assignment stay unmapped.
py - "$tool" <<'PY' || fail "map_pipelines (above)"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("ic", sys.argv[1]); ic = importlib.util.module_from_spec(spec); spec.loader.exec_module(ic)
def entries(*calls): return [{"address": hex(0x1000 * (i + 1)), "calls": c, "ir": 600 * c} for i, c in enumerate(calls)]
bad = []
e = entries(3, 6)  # combine (1 workgroup) first in address order
runs, why = ic.map_pipelines(e, [{"shader": "flash", "groups": [1, 2, 1]}, {"shader": "combine", "groups": [1, 1, 1]}])
if runs != 3 or [x["shader"] for x in e] != ["combine", "flash"]: bad.append(f"decode: {runs} {why} {e}")
e = entries(6, 6)
runs, why = ic.map_pipelines(e, [{"shader": "pack", "groups": [1, 1, 1]}, {"shader": "flash", "groups": [1, 2, 1]}])
if runs != 3 or [(x["shader"], x["dispatches_per_run"], x["ir_per_dispatch"]) for x in e] != [("pack", 2, 600.0), ("flash", 1, 1200.0)]:
    bad.append(f"pack twice a run: {runs} {why} {e}")
runs, why = ic.map_pipelines(entries(5, 6), [{"shader": "a", "groups": [2, 1, 1]}, {"shader": "b", "groups": [4, 1, 1]}])
if runs is not None or "not a multiple" not in why: bad.append(f"5 and 6 calls on 2 and 4 workgroups mapped: {runs} {why}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

# compare: the same counts pass; the coroutine 5% longer (8918000 -> 9364000
# of its 8918640 own instructions) is flagged, naming the case.
py "$tool" parse "$data/instr_count_abs.callgrind" --report "$data/instr_count_abs.report.json" --name abs.learned >"$work/base.json" || fail "parse --name"
sed 's/^0 8918000$/0 9364000/' "$data/instr_count_abs.callgrind" >"$work/slow.callgrind"
cmp -s "$work/slow.callgrind" "$data/instr_count_abs.callgrind" && fail "the sample has no coroutine count 8918000 to change"
py "$tool" parse "$work/slow.callgrind" --report "$data/instr_count_abs.report.json" --name abs.learned >"$work/new.json" || fail "parse slow"
out=$(py "$tool" compare "$work/base.json" "$work/base.json"); rc=$?
[[ $rc == 0 ]] || fail "compare of equal counts exited $rc: $out"
out=$(py "$tool" compare "$work/base.json" "$work/new.json"); rc=$?
[[ $rc == 1 ]] || fail "compare missed 5% more instructions (exit $rc): $out"
grep -q '^abs.learned: Ir/run 3001600 -> 3150267 (+4.95%)  MORE: FLAG$' <<<"$out" || fail "compare did not name abs.learned: $out"
# Fewer instructions pass unless --either.
out=$(py "$tool" compare "$work/new.json" "$work/base.json"); rc=$?
[[ $rc == 0 ]] || fail "fewer instructions failed the gate (exit $rc): $out"
out=$(py "$tool" compare --either "$work/new.json" "$work/base.json"); rc=$?
[[ $rc == 1 ]] || fail "--either did not flag fewer instructions (exit $rc): $out"

# Bad input: exit 2, one line naming it.
echo '{"results": []}' >"$work/report.json"
for bad in "$work/report.json" "$data/instr_count_abs.callgrind" "$work/missing.json"; do
  err=$(py "$tool" compare "$work/base.json" "$bad" 2>&1 >/dev/null); rc=$?
  [[ $rc == 2 && $(wc -l <<<"$err") == 1 && $err == *"$bad"* ]] || fail "compare BASE $bad: exit $rc, '$err'"
done
sed 's/LLVM 15.0.6/LLVM 16.0.6/' "$work/base.json" >"$work/llvm16.json"
err=$(py "$tool" compare "$work/base.json" "$work/llvm16.json" 2>&1 >/dev/null); rc=$?
[[ $rc == 2 && $err == *"LLVM 16.0.6"* ]] || fail "compare across drivers: exit $rc, '$err'"
err=$(py "$tool" parse "$data/instr_count_abs.report.json" 2>&1 >/dev/null); rc=$?
[[ $rc == 2 && $err == *"not callgrind format"* || $rc == 2 && $err == *"not a callgrind output file"* ]] || fail "parse of a report: exit $rc, '$err'"
err=$(py "$tool" compare --threshold -1 "$work/base.json" "$work/base.json" 2>&1 >/dev/null); rc=$?
[[ $rc == 2 && $err == *"--threshold -1"* ]] || fail "threshold -1: exit $rc, '$err'"
echo "instr_count: ok"

#!/usr/bin/env bash
# scripts/ci-validate-all.sh's verdicts, with a stand-in pebench that writes
# the report each scenario needs (no Vulkan): a clean plan passes; a failed
# case, a layer error, a warning outside the allow-list or a run that wrote no
# report fails it; the heavy cases run with the other checks, FIRE's flash
# again under GPU-assisted validation made small, and the heavy cases under
# it one by one: changed ones first, the rest in a rotation set by the
# commit's number, started while the budget lasts; a heavy case stopped at
# its limit is reported, not failed; a heavy filter that matches no case is
# not a failure. usage: ci_validate_all_test.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "ci_validate_all_test: FAIL: $*" >&2; exit 1; }
fake=$work/pebench
cat >"$fake" <<'SH'
#!/usr/bin/env bash
# FAKE: ok | failed | error | warning | crash | nomatch (the heavy filter matches nothing)
# FAKE_HEAVY_SLEEP: seconds a one-case GPU-assisted run takes.
out= filter= checks= prev=
for a in "$@"; do
  [[ $prev == --out ]] && out=$a
  case $a in --benchmark_filter=*) filter=${a#*=} ;; --validate=*) checks=${a#*=} ;; esac
  prev=$a
done
echo "$checks|$filter|$*" >>"${FAKE_CALLS:?}"
[[ $FAKE == crash ]] && { echo "pebench run: something broke" >&2; exit 1; }
if [[ -n $filter && $filter != -* && $FAKE == nomatch ]]; then
  echo "pebench run: error: --benchmark_filter=$filter matches no case" >&2; exit 2
fi
status=ok errors=0 warnings='{}'
case $FAKE in failed) status=failed ;; error) errors=1 ;; warning) warnings='{"UNASSIGNED-Made-Up": 3}' ;; esac
one() {  # one VARIANT IMPL SHADER
  printf '{"benchmark": "%s/%s/f32/seq:37", "variant": "%s", "impl": "%s", "params": {"dtype": "f32"}, "pipelines": [{"shader": "%s"}], "status": "%s", "reason": "", "vk_validation": {"errors": %d, "warnings": %s}}' \
    "$1" "$2" "$1" "$2" "$3" "$status" "$errors" "$warnings"
}
if [[ $filter == '^('* ]]; then  # the heavy cases
  results="$(one attn.fire flash attn_flash_gpu_fire), $(one abs.conv_grouped default abs_conv_grouped), $(one attn.nope flash attn_flash_gpu_nope)"
elif [[ $filter == *'$' ]]; then  # one heavy case
  sleep "${FAKE_HEAVY_SLEEP:-0}"
  name=${filter#^}; name=${name%$}; name=${name//\\/}
  results=$(one "${name%%/*}" x y)
else
  results=$(one attn.nope flash attn_flash_gpu_nope)
fi
echo "{\"results\": [$results]}" >"$out"
SH
chmod +x "$fake"
export PEBENCH=$fake FAKE_CALLS=$work/calls CI_VALIDATE_PLANS=desktop-gpu CI_VALIDATE_JOBS=2
export CI_VALIDATE_GPU_AV_SKIP='^(attn\.fire/flash|abs\.conv_grouped|attn\.nope/flash)/' CI_VALIDATE_CHANGED_FILES=
verdict() {  # verdict FAKE WANT_EXIT PATTERN
  rm -f "$FAKE_CALLS"
  out=$(FAKE=$1 bash "$src/scripts/ci-validate-all.sh" "$work/out-$1" 2>&1); rc=$?
  ((rc == $2)) || fail "FAKE=$1: exit $rc, want $2: $out"
  grep -q -- "$3" <<<"$out" || fail "FAKE=$1: no '$3' in: $out"
}
verdict ok 0 "8 case runs (8 ok) (3 heavy, .*: 3 of them again under GPU-assisted validation, FIRE's flash made small 1)"
# the fixed runs: all checks but the heavy cases; the heavy ones without
# GPU-assisted validation; FIRE's flash under it alone, made small; then each
# heavy case under it alone.
grep -q '^all|-^(attn' "$FAKE_CALLS" || fail "no run of all checks without the heavy cases: $(cat "$FAKE_CALLS")"
grep -q '^core,sync,best-practices|^(attn' "$FAKE_CALLS" || fail "no run of the heavy cases with the other checks"
grep -q '^gpu-av|^attn\\.fire/flash/|.*--param mlp_width=4' "$FAKE_CALLS" || fail "no small GPU-assisted run of FIRE's flash"
(($(grep -c '^gpu-av|^.*\$|' "$FAKE_CALLS") == 3)) || fail "want 3 one-case GPU-assisted runs: $(cat "$FAKE_CALLS")"
grep -q '^gpu-av|^abs\\.conv_grouped/default/f32/seq:37\$|' "$FAKE_CALLS" || fail "the case filter is not escaped: $(cat "$FAKE_CALLS")"
verdict nomatch 0 "ci-validate-all: .* ok"
verdict failed 1 "attn.nope flash f32: failed"
verdict error 1 "8 layer error(s)"
verdict warning 1 "UNASSIGNED-Made-Up (outside the allow-list)"
verdict crash 1 "no report (pebench exit 1): pebench run: something broke"

order() { cut -f2 "$work/out-ok/gpu-av-heavy.order" | cut -d/ -f1 | paste -sd' ' -; }
# The changed case comes first, whatever the rotation.
CI_VALIDATE_CHANGED_FILES=shaders/common/erf.glsl verdict ok 0 "(1 changed since CI_VALIDATE_CHANGED_FILES"
[ "$(order)" = "abs.conv_grouped attn.fire attn.nope" ] || fail "erf.glsl changed (abs_conv_grouped.comp includes it): order $(order)"
grep -q $'abs.conv_grouped/.*\tchanged$' "$work/out-ok/gpu-av-heavy.order" || fail "conv_grouped not marked changed"
CI_VALIDATE_CHANGED_FILES=src/suites/attn/attn_nope.cc verdict ok 0 "ran: attn.nope/flash/f32/seq:37 (changed)"
[ "$(order)" = "attn.nope abs.conv_grouped attn.fire" ] || fail "attn_nope.cc changed: order $(order)"
# The rotation: the start moves by the step per commit number.
export CI_VALIDATE_COMMIT_NUMBER=1
a=$(CI_VALIDATE_GPU_AV_ROTATE_STEP=1 bash "$src/scripts/ci-validate-all.sh" "$work/out-ok" >/dev/null 2>&1; order)
b=$(CI_VALIDATE_GPU_AV_ROTATE_STEP=2 bash "$src/scripts/ci-validate-all.sh" "$work/out-ok" >/dev/null 2>&1; order)
[ "$a" != "$b" ] || fail "rotation steps 1 and 2 gave one order: $a"
[ "$(tr ' ' '\n' <<<"$a" | sort | paste -sd' ')" = "abs.conv_grouped attn.fire attn.nope" ] || fail "the rotation lost a case: $a"
# The budget: with one lane and 2 s a case, a 1 s budget starts one.
CI_VALIDATE_JOBS=1 FAKE_HEAVY_SLEEP=2 CI_VALIDATE_GPU_AV_BUDGET=1 verdict ok 0 "1 of 3 started within the 1 s budget"
grep -q "2 more wait for later commits" <<<"$out" || fail "the waiting cases are not reported: $out"
# A case stopped at its limit is reported and does not fail the step.
CI_VALIDATE_GPU_AV_CASE_LIMIT=1 FAKE_HEAVY_SLEEP=5 verdict ok 0 "not finished in 1 s under GPU-assisted validation (not a failure): attn"
# Budget 0: no one-case runs.
CI_VALIDATE_GPU_AV_BUDGET=0 verdict ok 0 "ci-validate-all: .* ok"
(($(grep -c '^gpu-av|^.*\$|' "$FAKE_CALLS") == 0)) || fail "budget 0 ran heavy cases"
CI_VALIDATE_GPU_AV_BUDGET=soon verdict ok 2 "CI_VALIDATE_GPU_AV_BUDGET 'soon'"

# Without GPU-assisted validation there is one run a plan, heavy cases and all.
rm -f "$FAKE_CALLS"
FAKE=ok CI_VALIDATE_CHECKS=core,sync bash "$src/scripts/ci-validate-all.sh" "$work/out-core" >/dev/null 2>&1 ||
  fail "core,sync: a clean plan failed"
(($(wc -l <"$FAKE_CALLS") == 1)) || fail "core,sync: $(wc -l <"$FAKE_CALLS") runs, want 1"
echo "ci_validate_all_test: passed"

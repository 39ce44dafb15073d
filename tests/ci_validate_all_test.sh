#!/usr/bin/env bash
# scripts/ci-validate-all.sh's verdicts, with a stand-in pebench that writes
# the report each scenario needs (no Vulkan): a clean plan passes; a failed
# case, a layer error, a warning outside the allow-list or a run that wrote no
# report fails it; the heavy cases run with the other checks, and FIRE's
# flash again under GPU-assisted validation, made small; a heavy filter that
# matches no case is not a failure. usage: ci_validate_all_test.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "ci_validate_all_test: FAIL: $*" >&2; exit 1; }
fake=$work/pebench
cat >"$fake" <<'SH'
#!/usr/bin/env bash
# FAKE: ok | failed | error | warning | crash | nomatch (the heavy filter matches nothing)
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
printf '{"results": [{"variant": "attn.nope", "impl": "flash", "params": {"dtype": "f32"}, "status": "%s", "reason": "", "vk_validation": {"errors": %d, "warnings": %s}}]}\n' \
  "$status" "$errors" "$warnings" >"$out"
SH
chmod +x "$fake"
export PEBENCH=$fake FAKE_CALLS=$work/calls CI_VALIDATE_PLANS=desktop-gpu
verdict() {  # verdict FAKE WANT_EXIT PATTERN
  rm -f "$FAKE_CALLS"
  out=$(FAKE=$1 bash "$src/scripts/ci-validate-all.sh" "$work/out-$1" 2>&1); rc=$?
  ((rc == $2)) || fail "FAKE=$1: exit $rc, want $2: $out"
  grep -q -- "$3" <<<"$out" || fail "FAKE=$1: no '$3' in: $out"
}
verdict ok 0 "3 cases (3 ok) (1 without GPU-assisted validation"
# the three runs: all checks but the heavy cases; the heavy ones without
# GPU-assisted validation; the heavy ones under it alone, made small.
grep -q '^all|-^(attn' "$FAKE_CALLS" || fail "no run of all checks without the heavy cases: $(cat "$FAKE_CALLS")"
grep -q '^core,sync,best-practices|^(attn' "$FAKE_CALLS" || fail "no run of the heavy cases with the other checks"
grep -q '^gpu-av|^attn\\.fire/flash/|.*--param mlp_width=4' "$FAKE_CALLS" || fail "no small GPU-assisted run of FIRE's flash"
verdict nomatch 0 "ci-validate-all: .* ok"
verdict failed 1 "attn.nope flash f32: failed"
verdict error 1 "3 layer error(s)"
verdict warning 1 "UNASSIGNED-Made-Up (outside the allow-list)"
verdict crash 1 "no report (pebench exit 1): pebench run: something broke"
# Without GPU-assisted validation there is one run a plan, heavy cases and all.
rm -f "$FAKE_CALLS"
FAKE=ok CI_VALIDATE_CHECKS=core,sync bash "$src/scripts/ci-validate-all.sh" "$work/out-core" >/dev/null 2>&1 ||
  fail "core,sync: a clean plan failed"
(($(wc -l <"$FAKE_CALLS") == 1)) || fail "core,sync: $(wc -l <"$FAKE_CALLS") runs, want 1"
echo "ci_validate_all_test: passed"

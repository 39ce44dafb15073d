#!/usr/bin/env bash
# scripts/ab-gate.sh: bad input exits 2 with one line; a base that is this
# code passes at once; an unreachable base commit gates no time and says so;
# a 3x slowdown of one kernel, injected into the new side, fails the gate
# (in the first rounds and the confirming ones, which run that kernel only)
# naming that kernel only; the base build copies this build's SPIR-V where
# the base's shaders are this tree's, and only there.
# usage: ab_gate_test.sh SOURCE_DIR PEBENCH WORKDIR
set -uo pipefail
src=$1 pebench=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "ab_gate_test: FAIL: $*" >&2; exit 1; }
cd "$src"
export PEBENCH=$pebench VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}

out=$(AB_ROUNDS=3 PEBENCH_BASE=$pebench AB_OUT=$work/x scripts/ab-gate.sh 2>&1); rc=$?
((rc == 2)) && [[ $out == *"AB_ROUNDS=3"* ]] || fail "AB_ROUNDS=3: exit $rc, '$out'"

out=$(AB_BASE_COMMIT=HEAD AB_OUT=$work/x scripts/ab-gate.sh 2>&1); rc=$?
((rc == 0)) && [[ $out == *"the code is the base commit's"* ]] || fail "base HEAD: exit $rc, '$out'"

out=$(AB_BASE_COMMIT=0123456789abcdef0123456789abcdef01234567 AB_OUT=$work/x scripts/ab-gate.sh 2>&1); rc=$?
((rc == 0)) && [[ $out == *"TIMING NOT GATED"* ]] || fail "unknown commit: exit $rc, '$out'"

# The same binary on both sides, abs.learned 3x slower on the new one.
# Quick's abs cases at seq 128 and 1024 only: its seq-1 cases take about
# 0.1 ms, and under ctest -j2 one of them (abs.sinusoidal, the same binary on
# both sides) measured 1.51x in both the first and the confirming rounds
# (fresh-clone CI, 2026-11-28), naming a kernel nobody slowed.
out=$(PEBENCH_BASE=$pebench AB_OUT=$work/inject AB_INJECT=abs.learned=3 \
  AB_ARGS="--variant abs.learned,abs.sinusoidal --seq 128,1024" scripts/ab-gate.sh 2>"$work/inject.err"); rc=$?
((rc == 1)) || { cat "$work/inject.err" >&2; fail "abs.learned 3x slower: exit $rc (want 1), '$out'"; }
grep -q '^slower: abs.learned ' <<<"$out" || fail "no reason names abs.learned: '$out'"
if grep -v '^slower: abs.learned ' <<<"$out" | grep -q .; then fail "a reason names another kernel: '$out'"; fi
# The confirming rounds ran only the kernel the first rounds flagged.
python3 - "$work"/inject/confirm-*-[0-9]*.json <<'PY' || fail "the confirming rounds ran more than abs.learned"
import json, sys
ran = {r["variant"] for f in sys.argv[1:] if f.endswith(".json") for r in json.load(open(f))["results"]}
print("confirming rounds ran:", sorted(ran))
sys.exit(0 if sys.argv[1:] and ran == {"abs.learned"} else 1)
PY
out=$(AB_INTERLEAVE=case PEBENCH_BASE=$pebench AB_OUT=$work/x scripts/ab-gate.sh 2>&1); rc=$?
((rc == 2)) && [[ $out == *"AB_INTERLEAVE=case"* ]] || fail "AB_INTERLEAVE=case: exit $rc, '$out'"
# One process a variant and side: the same catch, from two processes a round.
out=$(AB_INTERLEAVE=variant PEBENCH_BASE=$pebench AB_OUT=$work/variant AB_INJECT=abs.learned=3 \
  AB_ARGS="--variant abs.learned,abs.sinusoidal --seq 128,1024" scripts/ab-gate.sh 2>"$work/variant.err"); rc=$?
((rc == 1)) || { cat "$work/variant.err" >&2; fail "AB_INTERLEAVE=variant, abs.learned 3x slower: exit $rc (want 1), '$out'"; }
grep -q '^slower: abs.learned ' <<<"$out" || fail "AB_INTERLEAVE=variant: no reason names abs.learned: '$out'"
if grep -v '^slower: abs.learned ' <<<"$out" | grep -q .; then fail "AB_INTERLEAVE=variant: a reason names another kernel: '$out'"; fi
n=$(ls "$work"/variant/parts/ab-new-1-*.json | wc -l)
((n == 2)) || fail "AB_INTERLEAVE=variant: round 1 ran $n processes a side, want 2 (one a variant)"
python3 - "$work"/variant/ab-new-1.json <<'PY' || fail "AB_INTERLEAVE=variant: round 1's report lacks a variant"
import json, sys
sys.exit(0 if {r["variant"] for r in json.load(open(sys.argv[1]))["results"]} == {"abs.learned", "abs.sinusoidal"} else 1)
PY
# The base build: where the base's shaders are this tree's, it copies the new
# build's SPIR-V (PEBENCH_SPIRV_FROM) instead of running glslc; after a shader
# changed, it compiles its own. In a clone whose HEAD changes src only over
# its parent (the base), with this tree's ab-gate.sh and a stand-in cmake
# that records its arguments and "builds" the real binary.
repo=$work/repo
git clone -q --shared "$src" "$repo" || fail "git clone $src"
cp scripts/ab-gate.sh "$repo/scripts/ab-gate.sh"
echo "// ab_gate_test: a src change" >>"$repo/src/cli/main.cc"
git -C "$repo" -c user.name=t -c user.email=t@t commit -qam "src change" || fail "commit in the clone"
mkdir -p "$work/stub" "$work/new/generated/spirv"
ln -sf "$(readlink -f "$pebench")" "$work/new/pebench"
cat >"$work/stub/cmake" <<STUB
#!/usr/bin/env bash
echo "\$*" >>"$work/cmake.args"
while ((\$#)); do
  case \$1 in
    -B) mkdir -p "\$2"; shift ;;
    --build) mkdir -p "\$2" && ln -sf "$(readlink -f "$pebench")" "\$2/pebench"; shift ;;
  esac
  shift
done
STUB
chmod +x "$work/stub/cmake"
base_build() {  # NAME: the gate in the clone, base = the clone's HEAD~1, abs.learned f32 at seq 128 only
  rm -rf "$repo/build-base" "$work/cmake.args"
  (cd "$repo" && PATH=$work/stub:$PATH PEBENCH=$work/new/pebench AB_BASE_COMMIT=HEAD~1 AB_OUT=$work/$1 \
    AB_CONFIRM_ROUNDS=0 AB_ARGS="--variant abs.learned --seq 128 --dtype f32" scripts/ab-gate.sh >/dev/null 2>"$work/$1.err")
  grep -q -- "-S build-base/src" "$work/cmake.args" || fail "$1: the base was not configured: $(cat "$work/cmake.args" "$work/$1.err")"
}
base_build same-shaders
grep -q -- "-DPEBENCH_SPIRV_FROM=$work/new/generated/spirv" "$work/cmake.args" ||
  fail "same shaders: the base build compiles its own SPIR-V: $(cat "$work/cmake.args")"
grep -q "SPIR-V copied" "$work/same-shaders.err" || fail "same shaders: no line says the SPIR-V was copied"
echo "// ab_gate_test: a shader change" >>"$repo/shaders/abs/abs_learned.comp"
base_build changed-shader
if grep -q -- "PEBENCH_SPIRV_FROM" "$work/cmake.args"; then fail "a changed shader: the base build copies this tree's SPIR-V"; fi
echo "ab_gate_test: passed (the injected slowdown: $(head -n 1 <<<"$out"))"

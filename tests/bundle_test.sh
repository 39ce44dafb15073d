#!/usr/bin/env bash
# bundle_test.sh SOURCE_DIR PEBENCH WORKDIR: scripts/bundle.sh's bundle, made
# from PEBENCH into WORKDIR/dist (twice: the second run replaces the first),
# unpacked from its tarball into an empty folder and run there on lavapipe
# (`gpu-check.sh --smoke`, and one `pebench.sh run --validate`) with the
# system's copies of the bundled libraries out of reach:
#   - where `unshare -m` works (root), inside a private mount namespace an
#     empty file is bind-mounted over every system copy of a library the
#     bundle carries (libstdc++ and libgcc_s too: lavapipe and LLVM then use
#     the bundle's, which the process has loaded already) and an empty folder
#     over every explicit_layer.d, so only the bundle's copies can load; a
#     check first shows that bin/pebench no longer starts without the bundle;
#   - in every case, LD_DEBUG=libs of every process shows each bundled library
#     loaded, and loaded only from the bundle's lib/.
# Also: MANIFEST.txt's sizes and sha256s, every NEEDED entry of a bundled file
# is glibc or bundled, README.txt's glibc version is the highest GLIBC_x.y
# any bundled file references, gpu-check.sh wrote its outputs and passed, and
# the loader (VK_LOADER_DEBUG=layer) took the validation layer from the
# bundle's layers/ and lib/.
#
# env: BUNDLE_TEST_DELETE='lib/libfmt*' deletes those files from the unpacked
#      copy before it runs (after the MANIFEST check): the test must then fail;
#      BUNDLE_TEST_HIDE=0 runs without hiding, as where unshare -m fails.
# Exit 0 pass, 1 fail, 77 skipped (no lavapipe).
set -euo pipefail
src=$1 pebench=$2 work=$3
fail() { echo "bundle_test: FAIL: $*" >&2; exit 1; }
lvp=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
[[ -f $lvp ]] || { echo "bundle_test: SKIPPED: $lvp missing (mesa-vulkan-drivers)"; exit 77; }

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

# --- make it (twice) and unpack the tarball -------------------------------------
for i in 1 2; do
  PEBENCH=$pebench "$src/scripts/bundle.sh" "$work/dist" >"$work/bundle$i.log" 2>&1 ||
    { cat "$work/bundle$i.log" >&2; fail "scripts/bundle.sh failed (run $i)"; }
done
cat "$work/bundle2.log"
shopt -s nullglob
tarballs=("$work"/dist/pebench-*-linux-x86_64.tar.gz)
((${#tarballs[@]} == 1)) || fail "expected one tarball in $work/dist, found ${#tarballs[@]}"
name=$(basename "${tarballs[0]}" .tar.gz)
for f in "$work"/dist/* "$work"/dist/.[!.]*; do
  [[ $f == "$work/dist/$name" || $f == "$work/dist/$name.tar.gz" ]] ||
    fail "bundle.sh left more than the folder and tarball in DESTDIR: $f"
done
mkdir "$work/unpacked"
tar -C "$work/unpacked" -xzf "${tarballs[0]}"
[[ $(ls -A "$work/unpacked") == "$name" ]] || fail "the tarball holds more than $name/"
b=$work/unpacked/$name
diff -r "$work/dist/$name" "$b" >/dev/null || fail "the tarball differs from the folder"

# --- what it holds -----------------------------------------------------------------
for f in bin/pebench lib/libvulkan.so.1 lib/libVkLayer_khronos_validation.so lib/libstdc++.so.6 lib/libgcc_s.so.1 \
  layers/VkLayer_khronos_validation.json icd/nvidia_egl_icd.json gpu-check.sh pebench.sh README.txt MANIFEST.txt; do
  [[ -f $b/$f ]] || fail "$f missing from the bundle"
done
[[ -n $(ls "$b"/lib/libfmt.so.* 2>/dev/null) && -n $(ls "$b"/lib/libbenchmark.so.* 2>/dev/null) ]] ||
  fail "libfmt or libbenchmark missing from lib/"
grep -q '"library_path": *"\.\./lib/libVkLayer_khronos_validation.so"' "$b/layers/VkLayer_khronos_validation.json" ||
  fail "the layer manifest's library_path is not ../lib/libVkLayer_khronos_validation.so"
bytes=$(du -sb "$b" | cut -f1)  # bundle.sh enforces the size limit

# MANIFEST.txt: every file but itself, with the right size and sha256.
listed=0
while read -r f size sum; do
  [[ $f == "#" ]] && continue
  [[ -f $b/$f ]] || fail "MANIFEST.txt lists $f, which is not in the bundle"
  [[ $(stat -c %s "$b/$f") == "$size" ]] || fail "$f: size differs from MANIFEST.txt"
  [[ $(sha256sum "$b/$f" | cut -d' ' -f1) == "$sum" ]] || fail "$f: sha256 differs from MANIFEST.txt"
  listed=$((listed + 1))
done <"$b/MANIFEST.txt"
[[ $listed == $(cd "$b" && find . -type f ! -name MANIFEST.txt | wc -l) ]] || fail "MANIFEST.txt does not list every file"
# The libraries the bundle is meant to carry: those MANIFEST.txt lists.
mapfile -t bundled < <(awk '$1 ~ /^lib\// { sub(/^lib\//, "", $1); print $1 }' "$b/MANIFEST.txt")

is_glibc() {
  case $1 in
    ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
      libutil.so.* | libresolv.so.* | libanl.so.* | libnsl.so.* | libthread_db.so.* | libnss_*.so.*) return 0 ;;
  esac
  return 1
}
glibc=0
for f in "$b"/bin/pebench "$b"/lib/*; do
  for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    is_glibc "$n" || [[ -f $b/lib/$n ]] || fail "${f#"$b"/} needs $n: neither glibc nor bundled"
  done
  v=$(objdump -p "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
  glibc=$(printf '%s\n%s\n' "$glibc" "${v:-0}" | sort -V | tail -n1)
done
grep -q "^Needs glibc $glibc or later" "$b/README.txt" || fail "README.txt does not say 'Needs glibc $glibc or later'"
grep -q "$(git -C "$src" rev-parse --short HEAD)" "$b/README.txt" || fail "README.txt does not name the commit"

if [[ -n ${BUNDLE_TEST_DELETE:-} ]]; then
  echo "bundle_test: BUNDLE_TEST_DELETE: deleting $BUNDLE_TEST_DELETE from the unpacked bundle (this run must fail)"
  # shellcheck disable=SC2086 # a glob, relative to the bundle
  (cd "$b" && rm -rf $BUNDLE_TEST_DELETE)
fi

# --- run it with the system's copies out of reach -------------------------------------
mkdir -p "$work/ld" "$work/empty.d"
: >"$work/empty"
cat >"$work/inner.sh" <<'EOF'
# Runs inside the private mount namespace (or plainly, with HIDE=0).
set -u
b=$1 work=$2 lvp=$3 hide=$4
shift 4
if ((hide)); then
  mount --make-rprivate / || exit 3
  declare -A hidden=()
  for n in "$@"; do
    for p in $(ldconfig -p 2>/dev/null | awk -v n="$n" '$1 == n { print $NF }') \
      /usr/lib/x86_64-linux-gnu/"$n" /lib/x86_64-linux-gnu/"$n" /usr/lib64/"$n" /usr/local/lib/"$n" /usr/lib/"$n"; do
      [[ -e $p ]] || continue
      r=$(readlink -f "$p")
      [[ -n ${hidden[$r]:-} ]] && continue
      mount --bind "$work/empty" "$r" || { echo "inner: cannot hide $r" >&2; exit 3; }
      hidden[$r]=1
      echo "hidden: $r ($n)"
    done
  done
  for d in /etc/vulkan/explicit_layer.d /usr/local/share/vulkan/explicit_layer.d /usr/share/vulkan/explicit_layer.d \
    "${XDG_DATA_HOME:-${HOME:-/root}/.local/share}/vulkan/explicit_layer.d"; do
    [[ -d $d ]] || continue
    mount --bind "$work/empty.d" "$d" || { echo "inner: cannot hide $d" >&2; exit 3; }
    echo "hidden: $d/"
  done
  # Proof that they are gone: without the bundle's lib/, pebench cannot start.
  if env -u LD_LIBRARY_PATH "$b/bin/pebench" --version >/dev/null 2>&1; then
    echo "inner: bin/pebench still starts without the bundle's lib/: the system copies are not hidden" >&2
    exit 3
  fi
fi
export VK_DRIVER_FILES=$lvp
unset LD_LIBRARY_PATH VK_LAYER_PATH VK_ADD_LAYER_PATH VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE
LD_DEBUG=libs LD_DEBUG_OUTPUT=$work/ld/smoke PEBENCH_GPU_CHECK_BUDGET_S=240 \
  "$b/gpu-check.sh" --smoke "$work/out" >"$work/gpu-check.stdout" 2>&1
echo $? >"$work/gpu-check.rc"
LD_DEBUG=libs LD_DEBUG_OUTPUT=$work/ld/validate VK_LOADER_DEBUG=layer \
  "$b/pebench.sh" run --validate --variant rope.apply --seq 16 --heads 2 --dim 16 --dtype f32 \
  --benchmark_min_time=0.001 --no-peak --quiet --out "$work/validate.json" >"$work/validate.log" 2>&1
echo $? >"$work/validate.rc"
exit 0
EOF
hide=0
if [[ ${BUNDLE_TEST_HIDE:-1} == 0 ]]; then
  echo "bundle_test: NOTE: BUNDLE_TEST_HIDE=0: the system copies stay reachable; only LD_DEBUG shows where each library came from"
elif unshare -m true 2>/dev/null; then hide=1; else
  echo "bundle_test: NOTE: unshare -m does not work here (not root?): the system copies stay reachable;" \
    "only LD_DEBUG shows where each library came from"
fi
if ((hide)); then
  unshare -m bash "$work/inner.sh" "$b" "$work" "$lvp" 1 "${bundled[@]}" >"$work/inner.log" 2>&1 ||
    { cat "$work/inner.log" >&2; fail "hiding the system's libraries failed"; }
  echo "bundle_test: in a private mount namespace, hid $(grep -c '^hidden: ' "$work/inner.log") system files and folders:"
  sed 's/^/  /' "$work/inner.log"
else
  bash "$work/inner.sh" "$b" "$work" "$lvp" 0 >"$work/inner.log" 2>&1 || { cat "$work/inner.log" >&2; fail "the run failed"; }
fi

# --- what happened ----------------------------------------------------------------
rc=$(cat "$work/gpu-check.rc")
((rc == 0)) || { tail -n 40 "$work/gpu-check.stdout" >&2; fail "gpu-check.sh --smoke exited $rc (log: $work/out/gpu-check.log)"; }
for f in summary.txt gpu-check.log quick.json gpu.json report.html reports.tar.gz; do
  [[ -s $work/out/$f ]] || fail "gpu-check.sh --smoke wrote no $f"
done
grep -q "every step passed" "$work/out/summary.txt" || fail "gpu-check.sh's summary.txt does not say every step passed"
grep -q llvmpipe "$work/out/quick.json" || fail "quick.json did not run on lavapipe"

rc=$(cat "$work/validate.rc")
((rc == 0)) || { tail -n 20 "$work/validate.log" >&2; fail "pebench.sh run --validate exited $rc"; }
grep -q "Insert instance layer \"VK_LAYER_KHRONOS_validation\" ($b/layers/../lib/libVkLayer_khronos_validation.so)" \
  "$work/validate.log" || fail "the loader did not insert the validation layer from the bundle (VK_LOADER_DEBUG: $work/validate.log)"
grep -q "Manifest: $b/layers/VkLayer_khronos_validation.json" "$work/validate.log" ||
  fail "the loader did not read the bundle's layer manifest"

# LD_DEBUG=libs: "calling init: PATH" for every library each process loaded.
lib_dir=$(cd "$b/lib" && pwd -P)
declare -A seen=()
while read -r path; do
  n=$(basename "$path")
  for x in "${bundled[@]}"; do
    [[ $n == "$x" ]] || continue
    [[ $(cd "$(dirname "$path")" 2>/dev/null && pwd -P) == "$lib_dir" ]] || fail "$n was loaded from $path, not from the bundle"
    seen[$n]=1
  done
done < <(cat "$work"/ld/* | sed -n 's/^ *[0-9]*:[[:space:]]*calling init: //p' | sort -u)
for x in "${bundled[@]}"; do
  [[ -n ${seen[$x]:-} ]] || fail "$x was never loaded from the bundle (LD_DEBUG logs: $work/ld)"
done
echo "bundle_test: every bundled library (${bundled[*]}) loaded from the bundle's lib/ only;" \
  "validation layer from its layers/; gpu-check.sh --smoke passed: $(head -n 3 "$work/out/summary.txt" | tail -n 2 | tr '\n' ' ')"
echo "bundle_test: PASS ($name, $(awk -v b="$bytes" 'BEGIN { printf "%.1f MiB", b / 1048576 }'))"

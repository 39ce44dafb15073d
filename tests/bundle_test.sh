#!/usr/bin/env bash
# bundle_test.sh SOURCE_DIR PEBENCH WORKDIR: scripts/bundle.sh's bundle, made
# from PEBENCH into WORKDIR/dist (twice: the second run replaces the first),
# unpacked from its tarball into an empty folder and run there on lavapipe:
#
# 1. gpu-check.sh --smoke and one `pebench.sh run --validate`, with the
#    system's copies of the bundled libraries out of reach:
#    - where `unshare -m` works (root), inside a private mount namespace an
#      empty file is bind-mounted over every system copy of a library the
#      bundle carries (libstdc++ and libgcc_s too: lavapipe and LLVM then use
#      the bundle's, which the process has loaded already) and an empty folder
#      over every explicit_layer.d, so only the bundle's copies can load; a
#      check first shows that bin/pebench no longer starts without the bundle.
#      The system's libstdc++ being an empty file there, env.sh must put
#      lib/fallback/ on LD_LIBRARY_PATH and say so;
#    - in every case, LD_DEBUG=libs of every process shows each bundled library
#      loaded, and loaded only from the bundle's lib/ (or lib/fallback/).
# 2. env.sh's libstdc++ choice, with the system's copies in reach: this
#    machine's libstdc++ is new enough (the bundle's is a copy of it), so
#    LD_LIBRARY_PATH is exactly <bundle>/lib, env.sh says nothing, and
#    `pebench.sh devices` loads libstdc++ and libgcc_s from the system, the
#    rest from lib/; with a version no libstdc++ has (GLIBCXX_99.0) added to
#    lib/fallback/needed-versions.txt, lib/fallback/ is on it, env.sh says
#    which version is missing and bin/pebench loads lib/fallback/'s;
#    PEBENCH_BUNDLE_FALLBACK=0 and =1 override either way.
# 3. env.sh's NVIDIA EGL driver choice, with a fake libEGL_nvidia.so.0 (a link
#    to lavapipe's ICD library) on LD_LIBRARY_PATH: where no driver manifest is
#    visible (XDG_* at an empty folder, and in a private mount namespace an
#    empty folder over the icd.d folders), env.sh sets
#    VK_DRIVER_FILES=<bundle>/icd/nvidia_egl_icd.json, says so in one line,
#    and `pebench.sh devices` then lists llvmpipe through that manifest; it
#    changes nothing and says nothing where lavapipe's manifest is visible
#    (a device is listed), where there is no EGL library, where
#    VK_DRIVER_FILES is already set, or with PEBENCH_BUNDLE_ICD_CHECK=0.
#
# Also: MANIFEST.txt's sizes and sha256s, every NEEDED entry of a bundled file
# is glibc or bundled, libstdc++ and libgcc_s are in lib/fallback/ and not in
# lib/, needed-versions.txt lists every GLIBCXX/CXXABI version bin/pebench and
# lib/ reference, README.txt's glibc versions are the highest GLIBC_x.y
# references without and with lib/fallback/, gpu-check.sh wrote its outputs
# and passed, and the loader (VK_LOADER_DEBUG=layer) took the validation
# layer from the bundle's layers/ and lib/.
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
for f in bin/pebench lib/libvulkan.so.1 lib/libVkLayer_khronos_validation.so lib/fallback/libstdc++.so.6 \
  lib/fallback/libgcc_s.so.1 lib/fallback/needed-versions.txt layers/VkLayer_khronos_validation.json \
  icd/nvidia_egl_icd.json gpu-check.sh pebench.sh env.sh README.txt MANIFEST.txt; do
  [[ -f $b/$f ]] || fail "$f missing from the bundle"
done
for f in lib/libstdc++.so.6 lib/libgcc_s.so.1; do
  [[ ! -e $b/$f ]] || fail "$f is in lib/: it belongs in lib/fallback/ only, or the system's is never used"
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
# The libraries the bundle is meant to carry, those MANIFEST.txt lists: in
# lib/ (main) and in lib/fallback/ (fallback), by name.
mapfile -t main < <(awk '$1 ~ /^lib\/[^/]*\.so/ { sub(/^lib\//, "", $1); print $1 }' "$b/MANIFEST.txt")
mapfile -t fallback < <(awk '$1 ~ /^lib\/fallback\/[^/]*\.so/ { sub(/^lib\/fallback\//, "", $1); print $1 }' "$b/MANIFEST.txt")
((${#main[@]} >= 4 && ${#fallback[@]} == 2)) || fail "MANIFEST.txt lists lib/ ${main[*]} and lib/fallback/ ${fallback[*]}"

is_glibc() {
  case $1 in
    ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
      libutil.so.* | libresolv.so.* | libanl.so.* | libnsl.so.* | libthread_db.so.* | libnss_*.so.*) return 0 ;;
  esac
  return 1
}
glibc=0 glibc_fb=0
for f in "$b"/bin/pebench "$b"/lib/*.so* "$b"/lib/fallback/*.so*; do
  for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    is_glibc "$n" || [[ -f $b/lib/$n || -f $b/lib/fallback/$n ]] || fail "${f#"$b"/} needs $n: neither glibc nor bundled"
  done
  v=$(objdump -p "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
  glibc_fb=$(printf '%s\n%s\n' "$glibc_fb" "${v:-0}" | sort -V | tail -n1)
  [[ $f == "$b"/lib/fallback/* ]] || glibc=$(printf '%s\n%s\n' "$glibc" "${v:-0}" | sort -V | tail -n1)
  # Every C++ runtime version a non-fallback file references must be in needed-versions.txt.
  if [[ $f != "$b"/lib/fallback/* ]]; then
    for ver in $(objdump -p "$f" | grep -o '\(GLIBCXX\|CXXABI\)_[0-9][0-9.]*' | sort -u); do
      grep -qx "libstdc++.so.6 $ver" "$b/lib/fallback/needed-versions.txt" ||
        fail "${f#"$b"/} references $ver, which lib/fallback/needed-versions.txt does not list"
    done
  fi
done
grep -q "^Needs glibc $glibc or later" "$b/README.txt" || fail "README.txt does not say 'Needs glibc $glibc or later'"
grep -q "^with an older libstdc++, or none, glibc $glibc_fb or later" "$b/README.txt" ||
  fail "README.txt does not say 'with an older libstdc++, or none, glibc $glibc_fb or later'"
grep -q "$(git -C "$src" rev-parse --short HEAD)" "$b/README.txt" || fail "README.txt does not name the commit"

if [[ -n ${BUNDLE_TEST_DELETE:-} ]]; then
  echo "bundle_test: BUNDLE_TEST_DELETE: deleting $BUNDLE_TEST_DELETE from the unpacked bundle (this run must fail)"
  # shellcheck disable=SC2086 # a glob, relative to the bundle
  (cd "$b" && rm -rf $BUNDLE_TEST_DELETE)
fi

# --- 1. run it with the system's copies out of reach ----------------------------------
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
unset LD_LIBRARY_PATH VK_LAYER_PATH VK_ADD_LAYER_PATH VK_INSTANCE_LAYERS VK_LOADER_LAYERS_ENABLE PEBENCH_BUNDLE_FALLBACK
LD_DEBUG=libs LD_DEBUG_OUTPUT=$work/ld/smoke PEBENCH_GPU_CHECK_BUDGET_S=240 PEBENCH_GPU_CHECK_DUMP_BYTES=2000000 \
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
  unshare -m bash "$work/inner.sh" "$b" "$work" "$lvp" 1 "${main[@]}" "${fallback[@]}" >"$work/inner.log" 2>&1 ||
    { cat "$work/inner.log" >&2; fail "hiding the system's libraries failed"; }
  echo "bundle_test: in a private mount namespace, hid $(grep -c '^hidden: ' "$work/inner.log") system files and folders:"
  sed 's/^/  /' "$work/inner.log"
else
  bash "$work/inner.sh" "$b" "$work" "$lvp" 0 >"$work/inner.log" 2>&1 || { cat "$work/inner.log" >&2; fail "the run failed"; }
fi

rc=$(cat "$work/gpu-check.rc")
((rc == 0)) || { tail -n 40 "$work/gpu-check.stdout" >&2; fail "gpu-check.sh --smoke exited $rc (log: $work/out/gpu-check.log)"; }
for f in summary.txt gpu-check.log quick.json gpu.json report.html reports.tar.gz; do
  [[ -s $work/out/$f ]] || fail "gpu-check.sh --smoke wrote no $f"
done
grep -q "every step passed" "$work/out/summary.txt" || fail "gpu-check.sh's summary.txt does not say every step passed"
grep -q llvmpipe "$work/out/quick.json" || fail "quick.json did not run on lavapipe"
# The dumps stay under their limit (2 MB here, of 3.1 MB in all, 15 MiB by default: the
# first H100 run packed 17.7 MB, over what a borrowed machine sends back,
# and lost them all): the largest cases are left out and named.
dump_bytes=$(wc -c <"$work/out/dumps.tar.gz" 2>/dev/null || echo 0)
((dump_bytes > 0 && dump_bytes <= 2000000)) || fail "dumps.tar.gz is $dump_bytes bytes: not packed within the 2000000-byte limit"
grep -q "dumps.tar.gz leaves out" "$work/out/summary.txt" || fail "summary.txt does not name the dump cases left out"
dump_list=$(tar tzf "$work/out/dumps.tar.gz")  # not piped into grep -q: pipefail would see tar's SIGPIPE
grep -q 'meta.json$' <<<"$dump_list" || fail "dumps.tar.gz holds no case"
[[ -f $b/tools/numpy/check_dumps.py && -f $b/tools/numpy/spec_ref.py ]] || fail "the bundle has no NumPy checker"

if ((hide)); then
  grep -q "^env.sh: LD_LIBRARY_PATH has lib/fallback .*this machine's lib\(stdc++\|gcc_s\).so.[0-9] (.*) lacks " \
    "$work/gpu-check.stdout" ||
    fail "with the system's libstdc++ an empty file, env.sh did not say it took lib/fallback/ (stdout: $work/gpu-check.stdout)"
fi

rc=$(cat "$work/validate.rc")
((rc == 0)) || { tail -n 20 "$work/validate.log" >&2; fail "pebench.sh run --validate exited $rc"; }
grep -q "Insert instance layer \"VK_LAYER_KHRONOS_validation\" ($b/layers/../lib/libVkLayer_khronos_validation.so)" \
  "$work/validate.log" || fail "the loader did not insert the validation layer from the bundle (VK_LOADER_DEBUG: $work/validate.log)"
grep -q "Manifest: $b/layers/VkLayer_khronos_validation.json" "$work/validate.log" ||
  fail "the loader did not read the bundle's layer manifest"

# loaded_from LOG...: "NAME DIR" for every library those LD_DEBUG=libs logs
# show a process initialising ("calling init: PATH"), DIR resolved.
loaded_from() {
  cat "$@" | sed -n 's/^ *[0-9]*:[[:space:]]*calling init: //p' | sort -u | while read -r path; do
    echo "$(basename "$path") $(cd "$(dirname "$path")" 2>/dev/null && pwd -P)"
  done
}
lib_dir=$(cd "$b/lib" && pwd -P)
fb_dir=$(cd "$b/lib/fallback" && pwd -P)
# expect_from LOGS_LIST DIR NAME...: each NAME loaded, and only from DIR ("system": from outside the bundle).
expect_from() {
  local logs=$1 dir=$2 n d found
  shift 2
  for n in "$@"; do
    found=0
    # shellcheck disable=SC2086 # LOGS is a glob
    while read -r x d; do
      [[ $x == "$n" ]] || continue
      found=1
      if [[ $dir == system ]]; then
        [[ $d != "$lib_dir" && $d != "$fb_dir" ]] || fail "$n was loaded from the bundle's $d, not from the system (LD_DEBUG: $logs)"
      else
        [[ $d == "$dir" ]] || fail "$n was loaded from $d, not from $dir (LD_DEBUG: $logs)"
      fi
    done < <(loaded_from $logs)
    ((found)) || fail "$n was never loaded (LD_DEBUG logs: $logs)"
  done
}
if ((hide)); then
  expect_from "$work/ld/*" "$lib_dir" "${main[@]}"
  expect_from "$work/ld/*" "$fb_dir" "${fallback[@]}"
  echo "bundle_test: 1. every bundled library (lib/: ${main[*]}; lib/fallback/: ${fallback[*]}) loaded from the bundle only;" \
    "validation layer from its layers/; gpu-check.sh --smoke passed: $(head -n 3 "$work/out/summary.txt" | tail -n 2 | tr '\n' ' ')"
else
  expect_from "$work/ld/*" "$lib_dir" "${main[@]}"
  echo "bundle_test: 1. every library in lib/ (${main[*]}) loaded from the bundle only; validation layer from its layers/;" \
    "gpu-check.sh --smoke passed: $(head -n 3 "$work/out/summary.txt" | tail -n 2 | tr '\n' ' ')"
fi

# --- 2. env.sh's libstdc++ choice -------------------------------------------------------
# source_env NAME [VAR=VALUE...]: sources env.sh in sh with those variables,
# LD_LIBRARY_PATH and VK_DRIVER_FILES after it into $work/env/NAME.out (one
# line each), its stderr into NAME.err.
mkdir -p "$work/env"
source_env() {
  local name=$1
  shift
  # shellcheck disable=SC2016 # expanded by that sh
  env -u LD_LIBRARY_PATH -u VK_DRIVER_FILES -u VK_ICD_FILENAMES -u PEBENCH_BUNDLE_FALLBACK -u PEBENCH_BUNDLE_ICD_CHECK \
    VK_DRIVER_FILES="$lvp" "$@" sh -c 'here=$1; . "$here/env.sh" && printf "%s\n%s\n" "$LD_LIBRARY_PATH" "${VK_DRIVER_FILES:-unset}"' \
    sh "$b" >"$work/env/$name.out" 2>"$work/env/$name.err" || fail "env.sh ($name) failed: $(cat "$work/env/$name.err")"
}
ld_path() { sed -n 1p "$work/env/$1.out"; }
drivers() { sed -n 2p "$work/env/$1.out"; }
quiet() { [[ ! -s $work/env/$1.err ]] || fail "env.sh ($1) said something, and should not have: $(cat "$work/env/$1.err")"; }
said() {  # NAME PATTERN: env.sh said exactly one line, matching PATTERN
  [[ $(wc -l <"$work/env/$1.err") == 1 ]] || fail "env.sh ($1) said $(wc -l <"$work/env/$1.err") lines, not one: $(cat "$work/env/$1.err")"
  grep -q "$2" "$work/env/$1.err" || fail "env.sh ($1) said '$(cat "$work/env/$1.err")', not /$2/"
}

source_env system
[[ $(ld_path system) == "$b/lib" ]] ||
  fail "with this machine's libstdc++ (the one the bundle copied), LD_LIBRARY_PATH is '$(ld_path system)', not '$b/lib'"
quiet system
source_env system-kept LD_LIBRARY_PATH=/nonexistent/x
[[ $(ld_path system-kept) == "$b/lib:/nonexistent/x" ]] || fail "env.sh did not keep LD_LIBRARY_PATH after lib/: '$(ld_path system-kept)'"
source_env forced PEBENCH_BUNDLE_FALLBACK=1
[[ $(ld_path forced) == "$b/lib:$b/lib/fallback" ]] || fail "PEBENCH_BUNDLE_FALLBACK=1: LD_LIBRARY_PATH is '$(ld_path forced)'"
said forced "^env.sh: LD_LIBRARY_PATH has lib/fallback .*PEBENCH_BUNDLE_FALLBACK=1"
env -u PEBENCH_BUNDLE_FALLBACK LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld-system" VK_DRIVER_FILES="$lvp" \
  "$b/pebench.sh" devices >"$work/devices-system.txt" 2>&1 ||
  fail "pebench.sh devices failed with the system's libstdc++: $(cat "$work/devices-system.txt")"
expect_from "$work/ld-system.*" system "${fallback[@]}"
mapfile -t linked < <(printf '%s\n' "${main[@]}" | grep -v '^libVkLayer_')  # all but the layer, which devices does not load
expect_from "$work/ld-system.*" "$lib_dir" "${linked[@]}"

# A version that no libstdc++ has: the check must fail, and fall back.
cp "$b/lib/fallback/needed-versions.txt" "$work/needed-versions.txt"
echo "libstdc++.so.6 GLIBCXX_99.0" >>"$b/lib/fallback/needed-versions.txt"
source_env too-old
[[ $(ld_path too-old) == "$b/lib:$b/lib/fallback" ]] ||
  fail "with GLIBCXX_99.0 needed, lib/fallback/ is not on LD_LIBRARY_PATH: '$(ld_path too-old)'"
said too-old "^env.sh: LD_LIBRARY_PATH has lib/fallback (the bundle's libstdc++ and libgcc_s, which need glibc $glibc_fb; .*lacks GLIBCXX_99.0 that"
source_env too-old-refused PEBENCH_BUNDLE_FALLBACK=0
[[ $(ld_path too-old-refused) == "$b/lib" ]] || fail "PEBENCH_BUNDLE_FALLBACK=0: LD_LIBRARY_PATH is '$(ld_path too-old-refused)'"
quiet too-old-refused
env -u PEBENCH_BUNDLE_FALLBACK LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld-fallback" "$b/pebench.sh" --version >"$work/version-fallback.txt" 2>&1 ||
  fail "pebench.sh --version failed with lib/fallback/: $(cat "$work/version-fallback.txt")"
expect_from "$work/ld-fallback.*" "$fb_dir" "${fallback[@]}"
cp "$work/needed-versions.txt" "$b/lib/fallback/needed-versions.txt"
echo "bundle_test: 2. env.sh: this machine's libstdc++ is used where it has every version needed (lib/fallback/ off" \
  "LD_LIBRARY_PATH, libstdc++ loaded from the system); with GLIBCXX_99.0 needed, lib/fallback/ is on it and loaded;" \
  "PEBENCH_BUNDLE_FALLBACK=0/1 override"

# --- 3. env.sh's NVIDIA EGL driver choice -------------------------------------------------
# A fake libEGL_nvidia.so.0: lavapipe's ICD library under that name, so that
# the EGL manifest, once chosen, gives a device.
lvp_lib=$(sed -n 's/.*"library_path"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$lvp")
[[ $lvp_lib == /* && -f $lvp_lib ]] || fail "$lvp: library_path '$lvp_lib' is not a file"
mkdir -p "$work/fake-egl" "$work/no-icd.d"
ln -s "$lvp_lib" "$work/fake-egl/libEGL_nvidia.so.0"
cat >"$work/icd.sh" <<'EOF'
# Runs where no driver manifest is visible: in a private mount namespace with
# the icd.d folders hidden (hide=1), or where /etc/vulkan/icd.d is empty.
set -u
b=$1 work=$2 hide=$3
if ((hide)); then
  mount --make-rprivate / || exit 3
  for d in /etc/vulkan/icd.d /usr/local/etc/vulkan/icd.d /usr/local/share/vulkan/icd.d /usr/share/vulkan/icd.d; do
    [[ -d $d ]] || continue
    mount --bind "$work/no-icd.d" "$d" || { echo "icd: cannot hide $d" >&2; exit 3; }
  done
fi
no_icd=(XDG_CONFIG_HOME="$work/no-icd.d" XDG_CONFIG_DIRS="$work/no-icd.d" XDG_DATA_HOME="$work/no-icd.d"
  XDG_DATA_DIRS="$work/no-icd.d")
run() {  # NAME VAR=VALUE...: env.sh's LD_LIBRARY_PATH and VK_DRIVER_FILES, its stderr
  local name=$1
  shift
  env -u LD_LIBRARY_PATH -u VK_DRIVER_FILES -u VK_ICD_FILENAMES -u PEBENCH_BUNDLE_ICD_CHECK "${no_icd[@]}" "$@" \
    sh -c 'here=$1; . "$here/env.sh" && printf "%s\n%s\n" "$LD_LIBRARY_PATH" "${VK_DRIVER_FILES:-unset}"' sh "$b" \
    >"$work/env/$name.out" 2>"$work/env/$name.err"
}
run egl LD_LIBRARY_PATH="$work/fake-egl"
run no-egl
run egl-set LD_LIBRARY_PATH="$work/fake-egl" VK_DRIVER_FILES="$work/no-icd.d/none.json"
run egl-off LD_LIBRARY_PATH="$work/fake-egl" PEBENCH_BUNDLE_ICD_CHECK=0
# No device without it, and llvmpipe through it.
env -u VK_DRIVER_FILES -u VK_ICD_FILENAMES "${no_icd[@]}" "$b/bin/pebench" devices >"$work/env/devices-no-icd.txt" 2>&1
echo $? >"$work/env/devices-no-icd.rc"
env -u VK_DRIVER_FILES -u VK_ICD_FILENAMES "${no_icd[@]}" LD_LIBRARY_PATH="$work/fake-egl" "$b/pebench.sh" devices \
  >"$work/env/devices-egl.txt" 2>&1
echo $? >"$work/env/devices-egl.rc"
exit 0
EOF
icd_hide=0
if ((hide)); then
  icd_hide=1
elif [[ -n $(ls /etc/vulkan/icd.d/*.json 2>/dev/null) ]]; then
  icd_hide=-1
fi
if ((icd_hide < 0)); then
  echo "bundle_test: NOTE: /etc/vulkan/icd.d has manifests and unshare -m does not work: the no-manifest cases are not run"
else
  if ((icd_hide)); then
    unshare -m bash "$work/icd.sh" "$b" "$work" 1 >"$work/icd.log" 2>&1 || { cat "$work/icd.log" >&2; fail "icd.sh failed"; }
  else
    bash "$work/icd.sh" "$b" "$work" 0 >"$work/icd.log" 2>&1 || { cat "$work/icd.log" >&2; fail "icd.sh failed"; }
  fi
  if (($(cat "$work/env/devices-no-icd.rc") == 0)) || grep -q llvmpipe "$work/env/devices-no-icd.txt"; then
    fail "with no driver manifest visible, bin/pebench devices still found a device: $(cat "$work/env/devices-no-icd.txt")"
  fi
  [[ $(drivers egl) == "$b/icd/nvidia_egl_icd.json" ]] ||
    fail "no device and a libEGL_nvidia.so.0: env.sh left VK_DRIVER_FILES '$(drivers egl)'"
  said egl "^env.sh: VK_DRIVER_FILES=$b/icd/nvidia_egl_icd.json: .*found no Vulkan device.*$work/fake-egl/libEGL_nvidia.so.0"
  [[ $(ld_path egl) == "$b/lib:$work/fake-egl" ]] || fail "env.sh (egl) changed LD_LIBRARY_PATH to '$(ld_path egl)'"
  if (($(cat "$work/env/devices-egl.rc") != 0)) || ! grep -q llvmpipe "$work/env/devices-egl.txt"; then
    fail "pebench.sh devices through the EGL manifest (lavapipe as libEGL_nvidia.so.0) found no llvmpipe: $(cat "$work/env/devices-egl.txt")"
  fi
  grep -q "^env.sh: VK_DRIVER_FILES=" "$work/env/devices-egl.txt" || fail "pebench.sh devices: env.sh did not say it took the EGL manifest"
  for c in no-egl egl-off; do
    [[ $(drivers $c) == unset ]] || fail "env.sh ($c) set VK_DRIVER_FILES=$(drivers $c)"
    quiet $c
  done
  [[ $(drivers egl-set) == "$work/no-icd.d/none.json" ]] || fail "env.sh replaced the VK_DRIVER_FILES it was given: $(drivers egl-set)"
  quiet egl-set
fi
# With lavapipe's manifest visible (a device is listed): nothing changes.
# shellcheck disable=SC2016 # expanded by that sh
env -u LD_LIBRARY_PATH -u VK_DRIVER_FILES -u VK_ICD_FILENAMES -u PEBENCH_BUNDLE_ICD_CHECK LD_LIBRARY_PATH="$work/fake-egl" \
  XDG_CONFIG_DIRS="$work/no-icd.d" XDG_DATA_DIRS="$(dirname "$(dirname "$(dirname "$lvp")")")" \
  sh -c 'here=$1; . "$here/env.sh" && printf "%s\n%s\n" "$LD_LIBRARY_PATH" "${VK_DRIVER_FILES:-unset}"' sh "$b" \
  >"$work/env/egl-device.out" 2>"$work/env/egl-device.err" || fail "env.sh (egl-device) failed"
[[ $(drivers egl-device) == unset ]] || fail "lavapipe listed, yet env.sh set VK_DRIVER_FILES=$(drivers egl-device)"
quiet egl-device
if ((icd_hide >= 0)); then
  echo "bundle_test: 3. env.sh: no device and a libEGL_nvidia.so.0 -> VK_DRIVER_FILES=icd/nvidia_egl_icd.json (llvmpipe" \
    "listed through it); unchanged with a device, without the library, with VK_DRIVER_FILES set, with PEBENCH_BUNDLE_ICD_CHECK=0"
fi
echo "bundle_test: PASS ($name, $(awk -v b="$bytes" 'BEGIN { printf "%.1f MiB", b / 1048576 }'))"

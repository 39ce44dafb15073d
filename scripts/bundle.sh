#!/usr/bin/env bash
# Makes a relocatable bundle of pebench for any x86-64 Linux machine with a
# Vulkan driver and nothing of ours installed:
#
#   DESTDIR/pebench-<commit>-linux-x86_64/          (DESTDIR default dist/)
#     bin/pebench        the built binary (build/pebench), stripped
#     lib/               every shared library it needs except glibc's own:
#                        Google Benchmark, fmt, the Vulkan loader
#                        (libvulkan.so.1, which volk dlopens, so ldd does not
#                        list it) and the Khronos validation layer, each under
#                        the name its users ask for
#     lib/fallback/      libstdc++ and libgcc_s, which need a newer glibc than
#                        the rest (Debian 12's: 2.36); env.sh uses them only
#                        where the machine's are missing or lack a symbol
#                        version that needed-versions.txt there lists
#     layers/            the validation layer's manifest, library_path made
#                        relative (../lib/...: the loader resolves it against
#                        the manifest's folder)
#     gpu-check.sh       scripts/gpu-check.sh: `./gpu-check.sh [--smoke] OUT`
#     env.sh             scripts/bundle-env.sh, which gpu-check.sh and
#                        pebench.sh source: LD_LIBRARY_PATH (lib/, and
#                        lib/fallback/ where needed), VK_LAYER_PATH, and
#                        VK_DRIVER_FILES=icd/nvidia_egl_icd.json where
#                        NVIDIA's EGL library is there and no device is found
#     pebench.sh         bin/pebench in env.sh's environment
#     icd/               nvidia_egl_icd.json: NVIDIA's driver through its EGL
#                        library, for machines without a display
#     tools/peers/       when the checkout has it
#     README.txt         how to run it, what is in it, the commit, the glibc it
#                        needs with and without lib/fallback/
#     MANIFEST.txt       every other file with its size and sha256
#   DESTDIR/pebench-<commit>-linux-x86_64.tar.gz
#
#   scripts/bundle.sh [DESTDIR]
#   env: PEBENCH: the binary to bundle, taken as it is (default build/pebench,
#        built first with scripts/build.sh when missing or older than a file
#        under src/, shaders/, cmake/ or CMakeLists.txt);
#        BUNDLE_MAX_MIB: the size limit of the folder (default 62)
#
# The folder is built in a temporary folder inside DESTDIR and renamed into
# place, so running it again replaces the old bundle whole. Exit 0: made;
# 1: a step failed (one line on stderr); 2: bad input.
set -euo pipefail
die() { echo "bundle: $*" >&2; exit 1; }
usage() { echo "usage: scripts/bundle.sh [DESTDIR]   (default dist/; env PEBENCH, BUNDLE_MAX_MIB)"; }

case ${1:-} in
  -h | --help) usage; exit 0 ;;
  -*) echo "bundle: unknown option '$1'; $(usage)" >&2; exit 2 ;;
esac
(($# <= 1)) || { echo "bundle: one DESTDIR at most, got $#: $*; $(usage)" >&2; exit 2; }
# 58, not issue 42's 40: since the results database (issue 48) pebench links
# libpq, whose own needs (GnuTLS, OpenSSL's libcrypto, Kerberos, LDAP, ...)
# add about 15 MiB; 40 again needs the PostgreSQL client loaded on demand.
# Issue 45's texel builds (one per CPU flash kernel and dtype, k and v read
# as texels in decode) added 1.8 MB of SPIR-V to the binary: 56.3 MiB, so
# the limit went from 56 to 58. The CPU flash kernel's pieces of keys, each
# a loop of its own (docs/masks.md, "How flash skips tiles": a choice per
# tile cost every tile a masked-off fold on llvmpipe), grew its SPIR-V from
# 16.4 to 22.1 MB (the binary from 18.3 to 20.9 MB): 59.2 MiB, so the limit
# went from 58 to 62.
max_mib=${BUNDLE_MAX_MIB:-62}
[[ $max_mib =~ ^[0-9]+$ ]] || { echo "bundle: BUNDLE_MAX_MIB '$max_mib' is not a whole number of MiB" >&2; exit 2; }

pebench=""
if [[ -n ${PEBENCH:-} ]]; then
  [[ -f $PEBENCH && -x $PEBENCH ]] || { echo "bundle: PEBENCH '$PEBENCH' is not an executable file" >&2; exit 2; }
  pebench=$(readlink -f "$PEBENCH")
fi

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/dist}
if [[ -e $dest && ! -d $dest ]]; then echo "bundle: DESTDIR '$dest' exists and is not a folder" >&2; exit 2; fi
mkdir -p "$dest" || { echo "bundle: cannot create DESTDIR '$dest'" >&2; exit 2; }
dest=$(cd "$dest" && pwd)
cd "$root"

for tool in ldd readelf objdump strip sha256sum tar gzip; do
  command -v "$tool" >/dev/null || die "$tool not found (Debian: binutils, coreutils, tar, gzip, libc-bin)"
done

# --- the binary ------------------------------------------------------------------
if [[ -z $pebench ]]; then
  pebench=build/pebench
  if [[ ! -x $pebench ]] || [[ -n $(find src shaders cmake CMakeLists.txt -type f -newer "$pebench" -print -quit) ]]; then
    echo "bundle: $pebench missing or older than the sources: scripts/build.sh" >&2
    scripts/build.sh >&2
  fi
fi
[[ $(readelf -h "$pebench" 2>/dev/null) == *"Advanced Micro Devices X86-64"* ]] ||
  die "$pebench is not an x86-64 ELF binary"

commit=$(git rev-parse --short HEAD 2>/dev/null) || die "not a git checkout: no commit to name the bundle by"
describe=$(git describe --always --dirty 2>/dev/null || echo "$commit")
name=pebench-$commit-linux-x86_64
version=$("$pebench" --version 2>/dev/null | head -n1) || version="unknown (it did not run here)"

# --- what to bundle ----------------------------------------------------------------
# glibc's own libraries stay the system's: they come with the dynamic linker.
is_glibc() {
  case $1 in
    ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
      libutil.so.* | libresolv.so.* | libanl.so.* | libnsl.so.* | libBrokenLocale.so.* | libthread_db.so.* | \
      libnss_*.so.* | libc_malloc_debug.so.* | linux-vdso.so.* | linux-gate.so.*) return 0 ;;
  esac
  return 1
}
# The x86-64 file the dynamic linker would load for a name (ldconfig's cache,
# then the usual folders).
find_lib() {
  local n=$1 p
  p=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true) |
    awk -v n="$n" '$1 == n && /x86-64/ { print $NF; exit }')
  if [[ -z $p ]]; then
    for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/local/lib /usr/lib64 /usr/lib; do
      [[ -e $d/$n ]] && { p=$d/$n; break; }
    done
  fi
  [[ -n $p ]] || die "$n not found on this machine (Debian: libvulkan1, vulkan-validationlayers)"
  echo "$p"
}

layer_manifest=""
for d in /etc/vulkan/explicit_layer.d /usr/local/share/vulkan/explicit_layer.d /usr/share/vulkan/explicit_layer.d; do
  [[ -f $d/VkLayer_khronos_validation.json ]] && { layer_manifest=$d/VkLayer_khronos_validation.json; break; }
done
[[ -n $layer_manifest ]] || die "VkLayer_khronos_validation.json not found in any explicit_layer.d (Debian: vulkan-validationlayers)"
layer_path=$(sed -n 's/.*"library_path"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$layer_manifest")
[[ $(wc -l <<<"$layer_path") == 1 && -n $layer_path ]] || die "$layer_manifest: not exactly one library_path"
[[ $layer_path == /* ]] || layer_path=$(find_lib "$(basename "$layer_path")")
layer_path=$(readlink -f "$layer_path")
layer_so=$(basename "$layer_path")
loader_path=$(readlink -f "$(find_lib libvulkan.so.1)")

# name -> source file, for the roots and everything ldd says they load.
declare -A libs=([libvulkan.so.1]=$loader_path [$layer_so]=$layer_path)
for f in "$pebench" "$loader_path" "$layer_path"; do
  out=$(ldd "$f" 2>&1) || die "ldd $f failed: $out"
  missing=$(awk '/=> not found/ { print $1 }' <<<"$out" | tr '\n' ' ')
  [[ -z $missing ]] || die "$f needs libraries this machine lacks: $missing"
  while read -r n arrow p _; do
    [[ $arrow == "=>" && -n $p ]] || continue
    is_glibc "$n" || libs[$n]=$(readlink -f "$p")
  done <<<"$out"
done

# --- build it in a temporary folder inside DESTDIR ---------------------------------------
tmp=$(mktemp -d "$dest/.bundle.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
b=$tmp/$name
mkdir -p "$b/bin" "$b/lib" "$b/layers"

before=0 after=0
shrink() {  # strip --strip-unneeded a copy, kept only when it is smaller
  local f=$1 s0 s1
  s0=$(stat -c %s "$f")
  strip --strip-unneeded -o "$f.stripped" "$f" 2>/dev/null || { rm -f "$f.stripped"; return 0; }
  s1=$(stat -c %s "$f.stripped")
  if ((s1 < s0)); then chmod --reference="$f" "$f.stripped"; mv "$f.stripped" "$f"; else rm -f "$f.stripped"; s1=$s0; fi
  before=$((before + s0)) after=$((after + s1))
}
# The C++ runtime goes to lib/fallback/, which env.sh puts on LD_LIBRARY_PATH
# only where the machine's own is missing or too old: Debian 12's libstdc++
# needs glibc 2.36 (arc4random), the rest of the bundle less.
is_fallback() { case $1 in libstdc++.so.* | libgcc_s.so.*) return 0 ;; esac; return 1; }
libdir() { if is_fallback "$1"; then echo lib/fallback; else echo lib; fi; }
mkdir -p "$b/lib/fallback"
cp "$pebench" "$b/bin/pebench"
chmod 755 "$b/bin/pebench"
shrink "$b/bin/pebench"
for n in "${!libs[@]}"; do
  f=$b/$(libdir "$n")/$n
  cp -L "${libs[$n]}" "$f"
  chmod 644 "$f"
  shrink "$f"
done
for n in libstdc++.so.6 libgcc_s.so.1; do
  [[ -f $b/lib/fallback/$n ]] || die "$n is not among the libraries ldd lists: nothing for lib/fallback/"
done

sed "s|\(\"library_path\"[[:space:]]*:[[:space:]]*\"\)[^\"]*\"|\1../lib/$layer_so\"|" "$layer_manifest" \
  >"$b/layers/VkLayer_khronos_validation.json"
grep -q "\"library_path\": *\"../lib/$layer_so\"" "$b/layers/VkLayer_khronos_validation.json" ||
  die "could not rewrite library_path in $layer_manifest"

[[ -f scripts/gpu-check.sh ]] || die "scripts/gpu-check.sh missing: the bundle's entry point"
cp scripts/gpu-check.sh "$b/gpu-check.sh"
chmod 755 "$b/gpu-check.sh"
if [[ -d tools/peers ]]; then
  mkdir -p "$b/tools"
  cp -r tools/peers "$b/tools/peers"
  find "$b/tools/peers" \( -name __pycache__ -o -name '*.pyc' \) -prune -exec rm -rf {} +
fi
# The independent NumPy checker, which gpu-check.sh runs on the dumps where
# the machine's python3 has NumPy (their verdict comes back, not only the
# dumps).
mkdir -p "$b/tools/numpy"
cp tests/numpy/check_dumps.py tests/numpy/spec_ref.py "$b/tools/numpy/"
# NVIDIA's usual ICD, libGLX_nvidia.so.0, gives no device where there is no
# display (a headless container: "Could not get 'vkCreateInstance' via
# 'vk_icdGetInstanceProcAddr'"); the same driver's EGL library does.
mkdir -p "$b/icd"
printf '{\n    "file_format_version": "1.0.1",\n    "ICD": { "library_path": "libEGL_nvidia.so.0", "api_version": "1.3.0" }\n}\n' \
  >"$b/icd/nvidia_egl_icd.json"
cat >"$b/pebench.sh" <<'EOF'
#!/bin/sh
# bin/pebench in the bundle's environment (env.sh: its libraries, validation
# layer and, where needed, driver manifest): ./pebench.sh devices
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh" || exit 1
exec "$here/bin/pebench" "$@"
EOF
chmod 755 "$b/pebench.sh"
[[ -f $root/scripts/bundle-env.sh ]] || die "scripts/bundle-env.sh missing: the bundle's env.sh"
cp "$root/scripts/bundle-env.sh" "$b/env.sh"
chmod 644 "$b/env.sh"

# Every bundled file's needs: nothing outside glibc may be left to the system.
bundled_files=("$b"/bin/pebench "$b"/lib/*.so* "$b"/lib/fallback/*.so*)
for f in "${bundled_files[@]}"; do
  for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    is_glibc "$n" || [[ -f $b/$(libdir "$n")/$n ]] || die "${f#"$b"/} needs $n, which is neither glibc nor bundled"
  done
done

# The glibc it needs: the highest GLIBC_x.y version any bundled file
# references, without lib/fallback/ (glibc) and with it (glibc_fb).
glibc_of() { objdump -p "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1; }
max_v() { printf '%s\n' "$@" | sort -V | tail -n1; }
glibc=0 glibc_by="" glibc_fb=0 glibc_fb_by="" per_file=""
for f in "${bundled_files[@]}"; do
  v=$(glibc_of "$f")
  [[ -n $v ]] || continue
  rel=${f#"$b"/}
  per_file+="    $rel: $v"$'\n'
  if [[ $rel != lib/fallback/* ]]; then
    if [[ $(max_v "$glibc" "$v") != "$glibc" ]]; then
      glibc=$v glibc_by=$rel
    elif [[ $v == "$glibc" ]]; then
      glibc_by+=", $rel"
    fi
  fi
  if [[ $(max_v "$glibc_fb" "$v") != "$glibc_fb" ]]; then
    glibc_fb=$v glibc_fb_by=$rel
  elif [[ $v == "$glibc_fb" ]]; then
    glibc_fb_by+=", $rel"
  fi
done

# What bin/pebench and lib/ need from lib/fallback/'s libraries (objdump's
# "required from NAME:" symbol versions), and the glibc those need: env.sh
# takes the machine's own libstdc++ and libgcc_s only where they define every
# one of these versions.
needs=$b/lib/fallback/needed-versions.txt
{
  echo "# LIBRARY VERSION: what bin/pebench and lib/*.so* need from lib/fallback/ (env.sh reads it)"
  echo "# glibc $glibc_fb: what lib/fallback/ needs"
  for f in "$b"/bin/pebench "$b"/lib/*.so*; do
    objdump -p "$f" | awk '/^Version References:/ { v = 1; next } v && /^$/ { v = 0 }
      v && /required from/ { lib = $3; sub(/:$/, "", lib); next } v && NF == 4 { print lib, $4 }'
  done | while read -r lib ver; do if is_fallback "$lib"; then echo "$lib $ver"; fi; done | LC_ALL=C sort -u
} >"$needs"
grep -q '^libstdc++.so.6 GLIBCXX_' "$needs" || die "found no GLIBCXX_ version that bin/pebench needs (objdump -p)"
glibcxx=$(sed -n 's/^libstdc++.so.6 GLIBCXX_//p' "$needs" | sort -V | tail -n1)
glibcxx_hint=""  # GCC 12's libstdc++ defines up to GLIBCXX_3.4.30
[[ $(max_v "$glibcxx" 3.4.30) == 3.4.30 ]] && glibcxx_hint=" (GCC 12's: Ubuntu 22.04 and Debian 12 have it)"

# Why each library is here.
why() {
  case $1 in
    libvulkan.so.1) echo "the Vulkan loader; volk dlopens it, so it is not a link-time dependency" ;;
    libVkLayer_khronos_validation.so) echo "the Khronos validation layer (--validate); layers/ points the loader at it" ;;
    libbenchmark.so*) echo "Google Benchmark: the timing loop and --benchmark_* flags" ;;
    libfmt.so*) echo "fmt: formatting" ;;
    libstdc++.so*) echo "the C++ runtime of pebench, Google Benchmark, fmt and the validation layer, where the machine's is too old" ;;
    libgcc_s.so*) echo "GCC's runtime (unwinding, exceptions), with lib/fallback/'s libstdc++" ;;
    *) echo "needed by $(grep -lxF "$1" "$b"/needs/* 2>/dev/null | xargs -r -n1 basename | tr '\n' ' ')" ;;
  esac
}
mkdir "$b/needs"
for f in "${bundled_files[@]}"; do
  readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$b/needs/$(basename "$f")"
done
lib_lines=""
for f in "$b"/lib/*.so* "$b"/lib/fallback/*.so*; do
  n=$(basename "$f")
  lib_lines+="    ${f#"$b"/} ($(numfmt --to=iec --suffix=B "$(stat -c %s "$f")"))"$'\n'
  lib_lines+="                  $(why "$n"); from ${libs[$n]}"$'\n'
done
rm -rf "$b/needs"

peers_line="    tools/peers/  not in this checkout"
[[ -d $b/tools/peers ]] && peers_line="    tools/peers/  the peer implementations (PyTorch) gpu-check.sh compares against"
cat >"$b/README.txt" <<EOF
pebench $describe for x86-64 Linux (bundle $name)

Vulkan compute benchmarks for Transformer positional encodings and attention,
with everything they need except glibc and a Vulkan driver (the GPU vendor's
ICD, e.g. NVIDIA's, found in /usr/share/vulkan/icd.d or /etc/vulkan/icd.d).
It needs no libvulkan on the machine: the loader is bundled.

Run (from any folder; the bundle may be moved anywhere):

    ./gpu-check.sh OUT            the full check on every GPU, results in OUT/
    ./gpu-check.sh --smoke OUT    a subset that takes seconds, on whatever device
    ./pebench.sh devices          pebench itself (any command: run, peak, list, ...)

gpu-check.sh exits 0 when every case passed. pebench.sh and gpu-check.sh
source env.sh, which sets LD_LIBRARY_PATH=<bundle>/lib (and lib/fallback,
below) and VK_LAYER_PATH=<bundle>/layers, and picks NVIDIA's EGL driver
where needed (below); it prints a line on stderr for each thing it does
beyond the first two. To run bin/pebench yourself:

    here=\$PWD; . ./env.sh; bin/pebench devices

Needs glibc $glibc or later (ldd --version prints yours) and a libstdc++ with
GLIBCXX_$glibcxx$glibcxx_hint;
with an older libstdc++, or none, glibc $glibc_fb or later:
  - glibc $glibc: the highest GLIBC_x.y symbol version that bin/pebench and
    lib/ reference, from $glibc_by;
  - lib/fallback/ holds Debian 12's libstdc++ and libgcc_s. env.sh puts it
    on LD_LIBRARY_PATH only where the machine's libstdc++.so.6 or
    libgcc_s.so.1 is missing or lacks a symbol version that bin/pebench or
    lib/ needs (lib/fallback/needed-versions.txt lists them), and says so.
    They need glibc $glibc_fb (from $glibc_fb_by).
    PEBENCH_BUNDLE_FALLBACK=1 puts it there always, =0 never.
Per file:
$per_file
No NVIDIA device, and VK_LOADER_DEBUG=error says "Could not get
'vkCreateInstance' via 'vk_icdGetInstanceProcAddr' for ICD
libGLX_nvidia.so.0"? That is NVIDIA's GLX library without a display (a
headless container); its EGL library works there, through
icd/nvidia_egl_icd.json. env.sh takes it by itself where neither
VK_DRIVER_FILES nor VK_ICD_FILENAMES is set, libEGL_nvidia.so.0 is on the
machine and bin/pebench devices lists no device without it (one line on
stderr says so; PEBENCH_BUNDLE_ICD_CHECK=0 turns the check off). Where
another device (e.g. llvmpipe) hides the NVIDIA GPU's absence, name it:

    VK_DRIVER_FILES=\$PWD/icd/nvidia_egl_icd.json ./gpu-check.sh OUT

Contents:
    bin/pebench   the benchmark binary ($version), stripped
                  (crash backtraces' pebench(+0xOFFSET) frames: addr2line -Cfe
                  on the unstripped build/pebench of that commit)
$lib_lines    layers/VkLayer_khronos_validation.json
                  the validation layer's manifest, library_path ../lib/$layer_so
    lib/fallback/needed-versions.txt
                  the symbol versions bin/pebench and lib/ need from
                  lib/fallback/'s libraries, and the glibc those need
    gpu-check.sh  the GPU check (above)
    pebench.sh    bin/pebench in env.sh's environment
    env.sh        the environment (above): POSIX sh, sourced with \$here set
    icd/nvidia_egl_icd.json
                  a Vulkan driver manifest for NVIDIA's EGL library (above)
$peers_line
    README.txt    this file
    MANIFEST.txt  every other file: path, size in bytes, sha256

Made by scripts/bundle.sh on $(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null) at commit $describe.
EOF

(
  cd "$b"
  echo "# file size sha256"
  find . -type f ! -name MANIFEST.txt | sed 's|^\./||' | LC_ALL=C sort | while read -r f; do
    echo "$f $(stat -c %s "$f") $(sha256sum "$f" | cut -d' ' -f1)"
  done
) >"$b/MANIFEST.txt"

bytes=$(du -sb "$b" | cut -f1)
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
((bytes < max_mib * 1048576)) || die "$name is $(mib "$bytes"), over the $max_mib MiB limit"

tar -C "$tmp" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$(git log -1 --format=%ct)" \
  -czf "$tmp/$name.tar.gz" "$name"

# Into place: the folder by two renames (the old one moves aside first), the tarball by one.
if [[ -e $dest/$name ]]; then mv "$dest/$name" "$tmp/old"; fi
mv "$b" "$dest/$name"
mv "$tmp/$name.tar.gz" "$dest/$name.tar.gz"

echo "bundle: $dest/$name: $(mib "$bytes") (limit $max_mib MiB; strip saved $(mib $((before - after)))), $(find "$dest/$name/lib" -type f -name '*.so*' | wc -l) libraries, needs glibc $glibc (with lib/fallback/: $glibc_fb)"
echo "bundle: $dest/$name.tar.gz: $(mib "$(stat -c %s "$dest/$name.tar.gz")")"

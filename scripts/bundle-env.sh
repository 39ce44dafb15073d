# env.sh of a bundle (scripts/bundle.sh copies this file there): the
# environment bin/pebench runs in. gpu-check.sh and pebench.sh source it; by
# hand:   here=/path/to/the/bundle; . "$here/env.sh"; "$here/bin/pebench" devices
# It needs $here, the bundle's folder. POSIX sh, safe under set -e, set -u
# and pipefail; prints nothing unless it does more than the first two lines
# below (then one line on stderr for each thing, saying what and why):
#
#   LD_LIBRARY_PATH  $here/lib first, then what it held before;
#                    and $here/lib/fallback (the bundle's libstdc++ and
#                    libgcc_s, which need a newer glibc than the rest) after
#                    $here/lib, but only where the libstdc++.so.6 or
#                    libgcc_s.so.1 the dynamic linker would find (in
#                    LD_LIBRARY_PATH, ldconfig -p, the usual folders) is
#                    missing or lacks a symbol version that
#                    lib/fallback/needed-versions.txt lists (what bin/pebench
#                    and lib/ need, found by bundle.sh).
#                    PEBENCH_BUNDLE_FALLBACK=1: always; =0: never.
#   VK_LAYER_PATH    $here/layers (the validation layer).
#   VK_DRIVER_FILES  $here/icd/nvidia_egl_icd.json (NVIDIA's driver through
#                    libEGL_nvidia.so.0), only where neither it nor
#                    VK_ICD_FILENAMES is set, libEGL_nvidia.so.0 is on this
#                    machine, and `bin/pebench devices --json` lists no device
#                    (or fails) without it: NVIDIA's usual manifest, through
#                    libGLX_nvidia.so.0, gives no device without a display (a
#                    headless container). PEBENCH_BUNDLE_ICD_CHECK=0: never.
#                    The one `devices` call is made only where the EGL
#                    library is there.

if [ -z "${here:-}" ] || [ ! -f "$here/env.sh" ]; then
  echo "env.sh: set here=<the bundle's folder> before sourcing it (here='${here:-}')" >&2
  # shellcheck disable=SC2317 # exit where it was run instead of sourced
  return 1 2>/dev/null || exit 1
fi

# LD_LIBRARY_PATH as it was, without this bundle's own folders (sourced twice:
# added once).
_pb_old=""
_pb_ifs=$IFS
_pb_noglob=+f  # how to restore the caller's globbing after each split below
case $- in *f*) _pb_noglob=-f ;; esac
IFS=:
set -f
for _pb_d in ${LD_LIBRARY_PATH:-}; do
  case $_pb_d in "" | "$here/lib" | "$here/lib/fallback") ;; *) _pb_old=${_pb_old:+$_pb_old:}$_pb_d ;; esac
done
set "$_pb_noglob"
IFS=$_pb_ifs

# _pb_find NAME: into _pb_f, the x86-64 file the dynamic linker would load for
# NAME (LD_LIBRARY_PATH as it was, ldconfig's cache, the usual folders), or "".
_pb_find() {
  _pb_f=""
  IFS=:
  set -f
  for _pb_d in $_pb_old; do
    if [ -e "$_pb_d/$1" ]; then _pb_f=$_pb_d/$1; break; fi
  done
  set "$_pb_noglob"
  IFS=$_pb_ifs
  if [ -z "$_pb_f" ]; then
    _pb_f=$({ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null |
      awk -v n="$1" '$1 == n && /x86-64/ && f == "" { f = $NF } END { print f }') || :
  fi
  if [ -z "$_pb_f" ]; then
    for _pb_d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
      if [ -e "$_pb_d/$1" ]; then _pb_f=$_pb_d/$1; break; fi
    done
  fi
}

# --- libstdc++ and libgcc_s: the machine's, or lib/fallback/ -------------------------
_pb_needs=$here/lib/fallback/needed-versions.txt
_pb_why=""
case ${PEBENCH_BUNDLE_FALLBACK:-} in
  1) _pb_why="PEBENCH_BUNDLE_FALLBACK=1" ;;
  0) ;;
  *)
    if [ -f "$_pb_needs" ]; then
      # libstdc++.so.6 before libgcc_s.so.1 (sort -r): the one that usually lacks something.
      # shellcheck disable=SC2013 # library names, one word each
      for _pb_lib in $(awk '!/^#/ && NF == 2 { print $1 }' "$_pb_needs" | sort -ru); do
        _pb_find "$_pb_lib"
        if [ -z "$_pb_f" ]; then
          _pb_why="this machine has no $_pb_lib"
          break
        fi
        # The version names the library defines are NUL-terminated strings in
        # it: every one the bundle needs must be there.
        _pb_missing=$(tr '\0' '\n' <"$_pb_f" 2>/dev/null | grep -a '^[A-Z][A-Z_]*_[0-9][0-9.]*$' | awk -v lib="$_pb_lib" '
          FNR == NR { if ($1 == lib) need[$2] = 1; next }
          ($0 in need) { delete need[$0] }
          END { n = 0; for (v in need) if (n++ == 0 || v > top) top = v
                if (n) print top (n > 1 ? " and " n - 1 " more version(s)" : "") }' "$_pb_needs" -) || :
        if [ -n "$_pb_missing" ]; then
          _pb_why="this machine's $_pb_lib ($_pb_f) lacks $_pb_missing that bin/pebench or lib/ needs"
          break
        fi
      done
    fi
    ;;
esac
if [ -n "$_pb_why" ]; then
  export LD_LIBRARY_PATH="$here/lib:$here/lib/fallback${_pb_old:+:$_pb_old}"
  _pb_glibc=$(sed -n 's/^# glibc \([0-9.]*\):.*/\1/p' "$_pb_needs" 2>/dev/null) || :
  _pb_have=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/^glibc //') || :
  echo "env.sh: LD_LIBRARY_PATH has lib/fallback (the bundle's libstdc++ and libgcc_s${_pb_glibc:+, which need glibc $_pb_glibc}${_pb_have:+; this machine has $_pb_have}): $_pb_why" >&2
else
  export LD_LIBRARY_PATH="$here/lib${_pb_old:+:$_pb_old}"
fi

export VK_LAYER_PATH="$here/layers"

# --- NVIDIA without a display: its EGL library as the driver --------------------------
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -z "${VK_ICD_FILENAMES:-}" ] && [ "${PEBENCH_BUNDLE_ICD_CHECK:-1}" != 0 ] &&
  [ -f "$here/icd/nvidia_egl_icd.json" ]; then
  _pb_find libEGL_nvidia.so.0
  _pb_add=""
  if [ -z "$_pb_f" ]; then  # where NVIDIA's container toolkit puts it, not always in ldconfig's cache
    for _pb_d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64/nvidia /usr/lib/nvidia; do
      if [ -e "$_pb_d/libEGL_nvidia.so.0" ]; then _pb_f=$_pb_d/libEGL_nvidia.so.0 _pb_add=$_pb_d; break; fi
    done
  fi
  if [ -n "$_pb_f" ]; then
    _pb_devs=$("$here/bin/pebench" devices --json 2>/dev/null) || _pb_devs=""
    case $_pb_devs in
      *'"device_type"'*) ;;
      *)
        export VK_DRIVER_FILES="$here/icd/nvidia_egl_icd.json"
        [ -n "$_pb_add" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$_pb_add"
        echo "env.sh: VK_DRIVER_FILES=$VK_DRIVER_FILES${_pb_add:+ and $_pb_add on LD_LIBRARY_PATH}: bin/pebench devices found no Vulkan device with this machine's driver manifests, and NVIDIA's $_pb_f is here (its GLX driver gives no device without a display)" >&2
        ;;
    esac
  fi
fi

unset _pb_old _pb_ifs _pb_noglob _pb_d _pb_f _pb_needs _pb_why _pb_lib _pb_missing _pb_glibc _pb_have _pb_add _pb_devs
unset -f _pb_find

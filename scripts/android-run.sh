#!/usr/bin/env bash
# Runs build-android/pebench (scripts/android-build.sh) on an Android device
# over adb: pushes it to /data/local/tmp/pebench, runs `pebench run` there
# (default: --preset mobile) and pulls the report to
# reports/android-<device model>.json.
#
#   scripts/android-run.sh [PEBENCH RUN ARGUMENTS...]
#   scripts/android-run.sh --preset mobile --variant 'rope.*'
#   env: ANDROID_SERIAL (adb's own: which device), PEBENCH_ANDROID (the
#        binary, default build-android/pebench), OUT (the local report path)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PEBENCH_ANDROID:-build-android/pebench}
dir=/data/local/tmp/pebench
command -v adb >/dev/null || { echo "android-run: adb not found (Debian: apt-get install adb)" >&2; exit 2; }
[[ -f $bin ]] || { echo "android-run: $bin not found; build it with scripts/android-build.sh" >&2; exit 2; }
state=$(adb get-state 2>/dev/null || true)
[[ $state == device ]] || { echo "android-run: no device ready over adb (state '${state:-none}'; see adb devices)" >&2; exit 2; }
(($# > 0)) || set -- --preset mobile
model=$(adb shell getprop ro.product.model | tr -d '\r' | tr -c 'A-Za-z0-9._-\n' '_')
out=${OUT:-reports/android-${model:-device}.json}

adb shell mkdir -p "$dir"
adb push "$bin" "$dir/pebench" >/dev/null
adb shell chmod 755 "$dir/pebench"
args=""
for a in "$@"; do args+=" '${a//\'/\'\\\'\'}'"; done
status=0
adb shell "cd $dir && ./pebench devices && ./pebench run$args --out report.json" || status=$?
mkdir -p "$(dirname "$out")"
if adb pull "$dir/report.json" "$out" >/dev/null; then
  echo "android-run: report: $out"
else
  echo "android-run: the run wrote no report" >&2
  status=${status/#0/1}
fi
exit "$status"

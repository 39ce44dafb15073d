#!/bin/sh
# Dump a small sweep of every registered variant with pebench and check every
# case against the independent NumPy reference (check_dumps.py).
# usage: run_dump_check.sh PEBENCH_EXE WORKDIR [PYTHON]
# Exit 0 only when cases were dumped and every one of them passed.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 PEBENCH_EXE WORKDIR [PYTHON]" >&2
  exit 2
fi
exe=$1
work=$2
python=${3:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)

rm -rf "$work"
mkdir -p "$work"
"$python" "$here/dump_sweep.py" "$exe" "$work/dump" "$work/reports"
"$python" "$here/check_dumps.py" "$work/dump"

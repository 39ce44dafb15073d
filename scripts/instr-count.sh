#!/usr/bin/env bash
# Instructions executed per kernel on lavapipe, counted by callgrind: a
# signal that load does not move (docs/compare-and-gate.md, "Instruction
# counts (callgrind)"). Needs valgrind.
#
#   scripts/instr-count.sh [CASE...]          count the reduced set (or the CASEs named)
#                                             into build/instr-count/counts.json and .md
#   scripts/instr-count.sh compare BASE NEW   exit 1 when a case ran past +2% instructions
#                                             (INSTR_THRESHOLD, a fraction; --either: fewer too)
#   scripts/instr-count.sh cases              the reduced set's names and pebench options
#
#   env: PEBENCH (default build/pebench), INSTR_OUT (default build/instr-count),
#        INSTR_ARGS: more pebench run options for every case
#   exit 2: bad input, one line naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=tools/instr_count.py
case ${1:-} in
  compare)
    shift
    exec /usr/bin/python3 "$tool" compare --threshold "${INSTR_THRESHOLD:-0.02}" "$@" ;;
  cases | parse)
    exec /usr/bin/python3 "$tool" "$@" ;;
esac
out=${INSTR_OUT:-build/instr-count}
command -v valgrind >/dev/null || { echo "instr-count: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
exec nice /usr/bin/python3 "$tool" measure --pebench "${PEBENCH:-build/pebench}" --dir "$out" \
  --out "$out/counts.json" --md "$out/counts.md" --args "${INSTR_ARGS:-}" "$@"

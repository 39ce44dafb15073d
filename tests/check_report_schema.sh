#!/bin/sh
# check_report_schema.sh PEBENCH PYTHON3 SCHEMA WORKDIR: runs the quick preset
# plus rejected cases (offset past table_len), and a sweep stopped by SIGINT
# after its first case (interrupted cases), and checks both reports against
# the schema, together with the committed reports (reports/baselines,
# reports/samples), so a schema change cannot orphan them.
set -eu
pebench=$1 python=$2 schema=$3 work=$4
mkdir -p "$work"
"$pebench" run --preset quick --param table_len=2000 --param offset=0,1990 \
  --out "$work/report.json" --quiet --benchmark_min_time=0.01 --benchmark_repetitions=1 >/dev/null || true

stopped=$work/interrupted.json
rm -f "$stopped"
"$pebench" run --variant abs.learned --seq 64,65,66,67,68,69,70,71 --benchmark_min_time=0.3 \
  --out "$stopped" --quiet >/dev/null 2>&1 &
pid=$!
tries=0
until grep -q '"status"' "$stopped" 2>/dev/null || [ $tries -ge 600 ]; do sleep 0.1; tries=$((tries + 1)); done
kill -INT "$pid"
wait "$pid" || true
grep -q '"status": "interrupted"' "$stopped" || { echo "$stopped: no interrupted case"; exit 1; }

reports=$(dirname "$schema")/..
exec "$python" "$(dirname "$0")/check_report_schema.py" "$schema" "$work/report.json" "$stopped" \
  "$reports"/baselines/*.json "$reports"/samples/*.json

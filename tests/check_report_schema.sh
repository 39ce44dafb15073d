#!/bin/sh
# check_report_schema.sh PEBENCH PYTHON3 SCHEMA WORKDIR: runs the quick preset
# plus rejected cases (offset past table_len) and checks the report against
# the schema, together with the committed reports (reports/baselines,
# reports/samples), so a schema change cannot orphan them.
set -eu
pebench=$1 python=$2 schema=$3 work=$4
mkdir -p "$work"
"$pebench" run --preset quick --param table_len=2000 --param offset=0,1990 \
  --out "$work/report.json" --quiet --benchmark_min_time=0.01 --benchmark_repetitions=1 >/dev/null || true
reports=$(dirname "$schema")/..
exec "$python" "$(dirname "$0")/check_report_schema.py" "$schema" "$work/report.json" \
  "$reports"/baselines/*.json "$reports"/samples/*.json

#!/usr/bin/env bash
# Measures the results database's goals (docs/results-db.md): ingest MB/s
# into SQLite and PostgreSQL, and a trend query over N runs. Makes N
# distinct copies of the committed quick baseline (created time and samples
# scaled), ingests them, times `pebench db trend` for one case.
#   scripts/measure-db.sh [N=500] [OUT=/tmp/pebench-db-measure]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-500}
OUT=${2:-/tmp/pebench-db-measure}
P=$PWD/build/pebench
rm -rf "$OUT"
mkdir -p "$OUT/r"
python3 - "$N" "$OUT/r" <<'PY'
import json, sys, random
n, out = int(sys.argv[1]), sys.argv[2]
doc = json.load(open("reports/baselines/lavapipe-quick.json"))
for i in range(n):
    random.seed(i)
    s = 1 + random.gauss(0, 0.02)
    d = json.loads(json.dumps(doc))
    d["created"] = "2027-%02d-%02dT%02d:%02d:00Z" % (1 + i // 600, 1 + (i // 24) % 25, i % 24, i % 60)
    d["tool"]["git_commit"] = "%040x" % i
    for r in d["results"]:
        for k in ("time_ns", "cpu_ns"):
            if k in r:
                for f in ("median", "min", "max", "mean"):
                    if isinstance(r[k].get(f), (int, float)): r[k][f] *= s
                r[k]["samples"] = [x * s for x in r[k].get("samples", [])]
    json.dump(d, open("%s/r%04d.json" % (out, i), "w"))
PY
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "reports: $N, $(du -sm "$OUT/r" | cut -f1) MB"
"$P" db ingest --db "$OUT/sqlite.db" "$OUT"/r/*.json | tail -1
echo "sqlite file: $(du -sm "$OUT/sqlite.db" | cut -f1) MB"
time_trend() {
  local s e
  s=$(date +%s.%N)
  "$P" db trend --db "$1" --case "abs.learned f32 seq=128" --format json >"$OUT/trend.json"
  e=$(date +%s.%N)
  echo "trend over $(python3 -c "import json;print(len(json.load(open('$OUT/trend.json'))['series'][0]['points']))") runs ($2): $(python3 -c "print(round($e-$s,3))") s (process start included)"
}
time_trend "$OUT/sqlite.db" sqlite
if bash tests/pg_server.sh start "$OUT/pg" >/dev/null && [ -f "$OUT/pg/url" ]; then
  URL=$(cat "$OUT/pg/url")
  "$P" db ingest --db "$URL" "$OUT"/r/*.json | tail -1
  time_trend "$URL" postgresql
  s=$(date +%s.%N); "$P" db changes --db "$URL" --format json >/dev/null; e=$(date +%s.%N)
  echo "changes over every series, $N runs (postgresql): $(python3 -c "print(round($e-$s,2))") s"
  bash tests/pg_server.sh stop "$OUT/pg"
fi

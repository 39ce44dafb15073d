#!/usr/bin/env bash
# A throwaway PostgreSQL server for the results-database tests (CTest
# fixture `pg`; also usable by hand):
#   tests/pg_server.sh start DIR   initdb in DIR/data, a server listening only
#                                  on the Unix socket DIR/.s.PGSQL.5432 (no
#                                  TCP port), trust auth, fsync off; writes
#                                  the URL to DIR/url
#   tests/pg_server.sh stop DIR    stops it and removes DIR
# Needs Debian's postgresql package (initdb/pg_ctl in
# /usr/lib/postgresql/*/bin). Without it, start writes DIR/skip with the
# reason and exits 0: the tests then skip with that line. PostgreSQL refuses
# to run as root, so as root the server runs as the `postgres` user.
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?DIR}
as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u postgres --); fi

case "$cmd" in
  start)
    rm -rf "$dir"
    mkdir -p "$dir"
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
      echo "PostgreSQL server not installed (Debian package postgresql: /usr/lib/postgresql/*/bin/initdb); the PostgreSQL back-end tests are skipped" |
        tee "$dir/skip"
      exit 0
    fi
    if [ "${#as_pg[@]}" -gt 0 ]; then
      if ! id postgres >/dev/null 2>&1; then
        echo "running as root and no postgres user to run the server as; the PostgreSQL back-end tests are skipped" |
          tee "$dir/skip"
        exit 0
      fi
      chown postgres "$dir"
      chmod 755 "$dir"
    fi
    "${as_pg[@]}" "$bin/initdb" -D "$dir/data" -A trust -U pebench --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log"; exit 1; }
    "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-k $dir -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=40" \
      start >/dev/null || { cat "$dir/server.log"; exit 1; }
    echo "postgresql:///postgres?host=$dir&user=pebench" >"$dir/url"
    echo "pg_server: started PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $dir/.s.PGSQL.5432"
    ;;
  stop)
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
      "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Starts node N's Patroni again (after kill-primary.sh); it rejoins as a replica (pg_rewind if needed).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
n="${1:?usage: $0 NODE (1-3)}"
d="$(node_dir "$n")"
[ -f "$d/patroni.yml" ] || { echo "no node $n in $SAS_HA_DIR" >&2; exit 1; }
if pid_alive "$(cat "$d/patroni.pid" 2>/dev/null || true)"; then echo "node$n is running"; exit 0; fi
pm=$(head -n 1 "$d/data/postmaster.pid" 2>/dev/null || true)
# a SIGKILLed postmaster's backends may still be exiting
for _ in $(seq 1 40); do pid_alive "$pm" || break; sleep 0.25; done
rm -f "$d/patroni.pid"
as_pg setsid sh -c 'echo $$ > "$0"; exec "$@"' "$d/patroni.pid" patroni "$d/patroni.yml" >> "$d/patroni.log" 2>&1 < /dev/null &
for _ in $(seq 1 50); do [ -s "$d/patroni.pid" ] && break; sleep 0.1; done
echo "started node$n (patroni $(cat "$d/patroni.pid"))"

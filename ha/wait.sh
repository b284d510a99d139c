#!/usr/bin/env bash
# Waits (at most $1 seconds, default 60) until the cluster has a leader, all three members are
# running and streaming, and, in synchronous mode, a synchronous standby. Exit 1 on time-out.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
limit="${1:-60}"
sync=$(cat "$SAS_HA_DIR/synchronous_mode" 2>/dev/null || echo true)
end=$((SECONDS + limit))
while [ $SECONDS -lt $end ]; do
  if leader_node >/dev/null; then
    running=0
    for i in $(seq 1 "$SAS_HA_NODES"); do
      state=$(curl -fsS --max-time 1 "http://127.0.0.1:$(rest_port "$i")/patroni" 2>/dev/null \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("state",""), d.get("role",""), "streaming" if d.get("replication_state","streaming")=="streaming" or d.get("role")=="master" or d.get("role")=="primary" else d.get("replication_state",""))' 2>/dev/null || true)
      case "$state" in "running master"*|"running primary"*|"running replica streaming") running=$((running + 1)) ;; esac
    done
    if [ "$running" = "$SAS_HA_NODES" ] && { [ "$sync" != true ] || sync_node >/dev/null; }; then
      exit 0
    fi
  fi
  sleep 0.5
done
echo "the cluster in $SAS_HA_DIR did not become healthy within ${limit}s:" >&2
patronictl_ list >&2 || true
exit 1

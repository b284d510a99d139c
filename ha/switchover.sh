#!/usr/bin/env bash
# A planned switchover with patronictl: the primary hands over to a (synchronous) standby, then
# rejoins as a replica. Prints the old and new leader and the start time (epoch milliseconds).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
leader=$(leader_node) || { echo "no leader" >&2; exit 1; }
candidate=$(sync_node || true)
if [ -z "$candidate" ]; then
  for i in $(seq 1 "$SAS_HA_NODES"); do [ "$i" != "$leader" ] && candidate=$i && break; done
fi
echo "switchover node$leader -> node$candidate at $(date +%s%3N)"
patronictl_ switchover --leader "node$leader" --candidate "node$candidate" --force sas-ha

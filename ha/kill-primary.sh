#!/usr/bin/env bash
# Kills the current primary's node the hard way: SIGKILL to its Patroni (so nothing restarts
# PostgreSQL or releases the leader key) and then to its postmaster. Its leader key then expires in
# etcd (ttl 10 s) and Patroni promotes the synchronous standby. Prints the killed node's number and
# the kill time (epoch milliseconds). ha/start-node.sh N brings the node back as a replica.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
leader=$(leader_node) || { echo "no leader to kill" >&2; exit 1; }
d="$(node_dir "$leader")"
pat=$(cat "$d/patroni.pid")
pm=$(head -n 1 "$d/data/postmaster.pid")
kill -KILL "$pat"
kill -KILL "$pm"
echo "killed node$leader (patroni $pat, postmaster $pm) at $(date +%s%3N)"

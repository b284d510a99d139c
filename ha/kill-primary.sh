#!/usr/bin/env bash
# Kills the current primary's node the hard way, as a machine dies: SIGKILL to its Patroni (so
# nothing restarts PostgreSQL or releases the leader key), its postmaster and every PostgreSQL
# process under it at once (a WAL sender left alive would still ship WAL to the standbys). Its leader key then expires in
# etcd (ttl 10 s) and Patroni promotes a standby (in synchronous mode the synchronous one). Prints
# the killed node's number and the kill time (epoch milliseconds). ha/start-node.sh N brings the
# node back as a replica.
#
#   --lag-ms N  first freeze the primary's WAL senders (SIGSTOP) for N ms, then kill: the primary
#               dies with commits no standby has received. With asynchronous replication those
#               commits were acknowledged and are lost; with synchronous replication they were
#               never acknowledged (the commits wait for the synchronous standby).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
lag=0
while [ $# -gt 0 ]; do
  case "$1" in
    --lag-ms) lag=$2; shift 2 ;;
    *) echo "usage: $0 [--lag-ms N]" >&2; exit 2 ;;
  esac
done
leader=$(leader_node) || { echo "no leader to kill" >&2; exit 1; }
d="$(node_dir "$leader")"
pat=$(cat "$d/patroni.pid")
pm=$(head -n 1 "$d/data/postmaster.pid")
if [ "$lag" -gt 0 ]; then
  senders=$(ps -o pid=,args= --ppid "$pm" | awk '/walsender/ {print $1}')
  [ -n "$senders" ] && kill -STOP $senders
  echo "froze WAL senders $(echo $senders) of node$leader for $lag ms"
  sleep "$(awk "BEGIN {print $lag / 1000}")"
fi
children=$(ps -o pid= --ppid "$pm" | tr -s ' \n' ' ')
kill -KILL "$pat" "$pm" $children 2>/dev/null || true
echo "killed node$leader (patroni $pat, postmaster $pm and its $(echo $children | wc -w) processes) at $(date +%s%3N)"

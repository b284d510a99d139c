#!/usr/bin/env bash
# Stops everything ha/start.sh started (three Patroni nodes with their PostgreSQL, and etcd) and
# deletes $SAS_HA_DIR. Processes are found by the pid files the scripts wrote, never by name.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
[ -d "$SAS_HA_DIR" ] || { echo "nothing to stop in $SAS_HA_DIR"; exit 0; }

postmaster_pid() { head -n 1 "$(node_dir "$1")/data/postmaster.pid" 2>/dev/null || true; }

# Patroni stops its PostgreSQL on SIGTERM.
for i in $(seq 1 "$SAS_HA_NODES"); do
  p=$(cat "$(node_dir "$i")/patroni.pid" 2>/dev/null || true)
  pid_alive "$p" && kill -TERM "$p"
done
for _ in $(seq 1 60); do
  alive=0
  for i in $(seq 1 "$SAS_HA_NODES"); do
    pid_alive "$(cat "$(node_dir "$i")/patroni.pid" 2>/dev/null || true)" && alive=1
    pid_alive "$(postmaster_pid "$i")" && alive=1
  done
  [ $alive = 0 ] && break
  sleep 0.5
done
for i in $(seq 1 "$SAS_HA_NODES"); do
  for p in "$(cat "$(node_dir "$i")/patroni.pid" 2>/dev/null || true)" "$(postmaster_pid "$i")"; do
    pid_alive "$p" && kill -KILL "$p"
  done
done
o="$SAS_HA_DIR/outside"
if [ -f "$o/postmaster.pid" ]; then
  as_pg "$PG_BIN/pg_ctl" -D "$o" -m fast -w stop > /dev/null 2>&1 || true
  p=$(head -n 1 "$o/postmaster.pid" 2>/dev/null || true)
  pid_alive "$p" && kill -KILL "$p"
fi
e=$(cat "$SAS_HA_DIR/etcd.pid" 2>/dev/null || true)
if pid_alive "$e"; then
  kill -TERM "$e"
  for _ in $(seq 1 20); do pid_alive "$e" || break; sleep 0.25; done
  pid_alive "$e" && kill -KILL "$e"
fi
# a SIGKILLed postmaster's children exit on their own once it is gone; wait for the ports to close
for _ in $(seq 1 40); do
  busy=0
  for port in $(for i in $(seq 1 "$SAS_HA_NODES"); do pg_port "$i"; done) "$SAS_HA_OUTSIDE_PORT"; do
    (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && busy=1
  done
  [ $busy = 0 ] && break
  sleep 0.25
done
rm -rf "$SAS_HA_DIR"
echo "stopped and removed $SAS_HA_DIR"

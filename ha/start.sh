#!/usr/bin/env bash
# Starts a local highly available PostgreSQL 15 cluster for SAS: one etcd and three Patroni nodes
# on 127.0.0.1 (PostgreSQL on ports 5441-5443 by default, never 5432), everything under
# $SAS_HA_DIR (default /tmp/sas-ha). Waits until there is a leader and, in synchronous mode, a
# synchronous standby, creates the database "test", and prints the multi-host JDBC URL. Also starts
# a plain PostgreSQL outside the cluster (port 5444 by default, database "test"), for state that a
# failover must not touch (the chaos harness's ledger).
#
#   ha/start.sh           synchronous replication (Patroni synchronous_mode: true)
#   ha/start.sh --async   asynchronous replication (synchronous_mode: false)
#
# Needs the Debian packages patroni, etcd-server, etcd-client and PostgreSQL 15 binaries in
# $PG_BIN (default /usr/lib/postgresql/15/bin). Run as root, it runs etcd, Patroni and PostgreSQL
# as the postgres user (PostgreSQL refuses to run as root). ha/stop.sh removes it all again.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"

SYNC=true
for arg in "$@"; do
  case "$arg" in
    --async) SYNC=false ;;
    --sync) SYNC=true ;;
    *) echo "usage: $0 [--sync|--async]" >&2; exit 2 ;;
  esac
done

for tool in patroni patronictl etcd etcdctl curl "$PG_BIN/postgres"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "missing $tool (apt-get install -y patroni etcd-server etcd-client postgresql-15)" >&2; exit 3; }
done
if [ -f "$SAS_HA_DIR/etcd.pid" ] && pid_alive "$(cat "$SAS_HA_DIR/etcd.pid")"; then
  echo "a cluster is already running in $SAS_HA_DIR; run ha/stop.sh first" >&2; exit 1
fi
for port in $(for i in $(seq 1 "$SAS_HA_NODES"); do pg_port "$i"; done) "$SAS_HA_OUTSIDE_PORT"; do
  if (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "port $port is in use; set SAS_HA_PORT to other ports" >&2; exit 1
  fi
done

rm -rf "$SAS_HA_DIR"
mkdir -p "$SAS_HA_DIR"
[ "$(id -u)" = 0 ] && chown postgres: "$SAS_HA_DIR"
as_pg mkdir -p "$SAS_HA_DIR/etcd"
echo "$SYNC" > "$SAS_HA_DIR/synchronous_mode"

# Runs "$@" as the postgres user in the background, detached, with its pid in $1 and output in $2.
spawn() {
  local pidfile=$1 log=$2; shift 2
  as_pg setsid sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" > "$log" 2>&1 < /dev/null &
  for _ in $(seq 1 50); do [ -s "$pidfile" ] && return 0; sleep 0.1; done
  echo "could not start $*" >&2; exit 1
}

peer=$((SAS_HA_ETCD_PORT + 1))
spawn "$SAS_HA_DIR/etcd.pid" "$SAS_HA_DIR/etcd.log" etcd --name sas-ha-etcd --data-dir "$SAS_HA_DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$SAS_HA_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$SAS_HA_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
  --initial-cluster "sas-ha-etcd=http://127.0.0.1:$peer" --initial-cluster-state new
for _ in $(seq 1 100); do
  ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$SAS_HA_ETCD_PORT" endpoint health >/dev/null 2>&1 && break
  sleep 0.2
done

for i in $(seq 1 "$SAS_HA_NODES"); do
  d="$(node_dir "$i")"
  as_pg mkdir -p "$d"
  as_pg tee "$d/patroni.yml" > /dev/null <<YAML
scope: sas-ha
namespace: /sas-ha/
name: node$i
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$(rest_port "$i")
  connect_address: 127.0.0.1:$(rest_port "$i")
etcd3:
  hosts: 127.0.0.1:$SAS_HA_ETCD_PORT
bootstrap:
  dcs:
    # Leader key time-to-live: a dead primary is replaced after at most ttl + loop_wait seconds.
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 16777216
    synchronous_mode: $SYNC
    synchronous_mode_strict: false
    synchronous_node_count: 1
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        synchronous_commit: "on"
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - auth-host: trust
    - auth-local: trust
postgresql:
  listen: 127.0.0.1:$(pg_port "$i")
  connect_address: 127.0.0.1:$(pg_port "$i")
  data_dir: $d/data
  bin_dir: $PG_BIN
  pgpass: $d/pgpass
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: replicator, password: replicator}
    rewind: {username: postgres, password: postgres}
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  parameters:
    unix_socket_directories: $d
    max_connections: 200
    shared_buffers: 64MB
    logging_collector: "on"
    log_directory: $d/pglog
    log_min_messages: warning
tags:
  nofailover: false
  noloadbalance: false
YAML
  # the first node bootstraps alone, so it becomes the leader; the others clone it
  spawn "$d/patroni.pid" "$d/patroni.log" patroni "$d/patroni.yml"
  if [ "$i" = 1 ]; then
    for _ in $(seq 1 120); do leader_node >/dev/null && break; sleep 0.5; done
    leader_node >/dev/null || { echo "node1 did not become the leader; see $d/patroni.log" >&2; exit 1; }
  fi
done

o="$SAS_HA_DIR/outside"
as_pg "$PG_BIN/initdb" -D "$o" -A trust -U postgres -E UTF8 > "$SAS_HA_DIR/outside-initdb.log"
as_pg "$PG_BIN/pg_ctl" -D "$o" -l "$SAS_HA_DIR/outside.log" -w -o "-p $SAS_HA_OUTSIDE_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$o -c max_connections=200" start > /dev/null
psql -h 127.0.0.1 -p "$SAS_HA_OUTSIDE_PORT" -U postgres -d postgres -q -c "CREATE DATABASE test"

"$HERE/wait.sh" 120
leader=$(leader_node)
psql -h 127.0.0.1 -p "$(pg_port "$leader")" -U postgres -d postgres -qAt \
  -c "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
  || psql -h 127.0.0.1 -p "$(pg_port "$leader")" -U postgres -d postgres -q -c "CREATE DATABASE test"
patronictl_ list
echo "outside the cluster: $(outside_url)"
echo "$(jdbc_url)"

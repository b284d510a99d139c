# Shared settings of the local HA PostgreSQL cluster scripts (sourced, not run).
# SAS_HA_DIR  directory the scripts own: data, configs, logs, pids (default /tmp/sas-ha);
#             stop.sh deletes it, so never point it at anything else
# SAS_HA_PORT first PostgreSQL port; nodes use PORT, PORT+1, PORT+2 (default 5441)
# SAS_HA_ETCD_PORT etcd client port; the peer port is the next one (default 2479)
# SAS_HA_REST_PORT first Patroni REST API port (default 8011)
SAS_HA_DIR="${SAS_HA_DIR:-/tmp/sas-ha}"
SAS_HA_PORT="${SAS_HA_PORT:-5441}"
SAS_HA_ETCD_PORT="${SAS_HA_ETCD_PORT:-2479}"
SAS_HA_REST_PORT="${SAS_HA_REST_PORT:-8011}"
SAS_HA_NODES=3
# A plain PostgreSQL outside the cluster (port PORT+3): the chaos harness keeps its ledger there,
# standing for the remote services' own state, which a failover of SAS's store must not roll back.
SAS_HA_OUTSIDE_PORT="${SAS_HA_OUTSIDE_PORT:-$((SAS_HA_PORT + 3))}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"

case "$SAS_HA_DIR" in
  /|/tmp|/tmp/|/var*|/usr*|/etc*|/home|/root|"") echo "refusing SAS_HA_DIR=$SAS_HA_DIR" >&2; exit 2 ;;
esac
if [ "$SAS_HA_PORT" -le 5432 ] && [ $((SAS_HA_PORT + SAS_HA_NODES)) -ge 5432 ]; then
  echo "refusing SAS_HA_PORT=$SAS_HA_PORT: the nodes would include port 5432" >&2; exit 2
fi

pg_port() { echo $((SAS_HA_PORT + $1 - 1)); }
rest_port() { echo $((SAS_HA_REST_PORT + $1 - 1)); }
node_dir() { echo "$SAS_HA_DIR/node$1"; }

# Patroni and PostgreSQL refuse to run as root: run them as the postgres user then.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

patronictl_() { patronictl -c "$(node_dir 1)/patroni.yml" "$@"; }

# The node number (1..3) whose Patroni reports itself the leader (REST GET /primary = 200), or nothing.
leader_node() {
  local i
  for i in $(seq 1 "$SAS_HA_NODES"); do
    if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$(rest_port "$i")/primary" 2>/dev/null; then
      echo "$i"; return 0
    fi
  done
  return 1
}

# The node number of a synchronous standby (REST GET /synchronous = 200), or nothing.
sync_node() {
  local i
  for i in $(seq 1 "$SAS_HA_NODES"); do
    if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$(rest_port "$i")/synchronous" 2>/dev/null; then
      echo "$i"; return 0
    fi
  done
  return 1
}

# The JDBC URL of the instance outside the cluster.
outside_url() { echo "jdbc:postgresql://127.0.0.1:$SAS_HA_OUTSIDE_PORT/test?user=postgres"; }

# The multi-host JDBC URL for SAS.
jdbc_url() {
  local hosts="" i
  for i in $(seq 1 "$SAS_HA_NODES"); do
    hosts="$hosts${hosts:+,}127.0.0.1:$(pg_port "$i")"
  done
  echo "jdbc:postgresql://$hosts/test?user=postgres&targetServerType=primary"
}

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

#!/bin/sh
# Restarts the local MariaDB the way the machines here run it (started by start-stop-daemon, no
# systemd): a clean shutdown, wait for the server to exit, start it again in the background.
# Used by the chaos harness: --restart-cmd "sh sas-reliability/bin/restart-mariadb.sh".
set -e
mariadb-admin -h 127.0.0.1 -uroot shutdown
for _ in $(seq 1 60); do
  pgrep -x mariadbd >/dev/null || break
  sleep 0.5
done
start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd

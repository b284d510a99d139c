#!/usr/bin/env bash
# Shows the cluster's members, roles and lag (patronictl list) and the JDBC URL.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
patronictl_ list
outside_url
jdbc_url

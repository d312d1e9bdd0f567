#!/usr/bin/env bash
# A series of 12 runs of one short MariaDB sweep into one store, for `annbench history`
# (docs/methodology.md, "Series of runs and change points"): from run CHANGE_AT on (0: never),
# mhnsw_max_cache_size is lowered to SMALL bytes, on an instance of its own (`hist`, started
# here) so the main server's settings never change.
#
#   scripts/history-series.sh STORE CHANGE_AT [SMALL]
#   scripts/history-series.sh results-change 7 4194304 && annbench history --dataset glove-twitter-25-angular --results results-change
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
store=$1; change_at=$2; small=${3:-4194304}
"$repo/scripts/databases.sh" up-instance hist mariadb >/dev/null
# shellcheck disable=SC1091
source "${ANNBENCH_CACHE_DIR:-$HOME/.cache/annbench}/servers.env"
url=$ANNBENCH_MARIADB_HIST_URL
rest=${url#mysql://}; userpass=${rest%%@*}; hostport=${rest#*@}; hostport=${hostport%%/*}
sql() { MYSQL_PWD="${userpass#*:}" mariadb -u "${userpass%%:*}" -h "${hostport%%:*}" -P "${hostport##*:}" -N -e "$1"; }
default=$(sql "SELECT @@GLOBAL.mhnsw_max_cache_size")
grid=$(mktemp); trap 'rm -f "$grid"; sql "SET GLOBAL mhnsw_max_cache_size = $default"' EXIT
printf 'algorithm: mariadb\ngroups:\n  - name: nightly\n    build: {M: [16]}\n    query: {ef_search: [20, 80]}\n' >"$grid"
for i in $(seq 1 12); do
  size=$default
  if [ "$change_at" -gt 0 ] && [ "$i" -ge "$change_at" ]; then size=$small; fi
  sql "SET GLOBAL mhnsw_max_cache_size = $size"
  echo "run $i: mhnsw_max_cache_size=$size"
  "$repo/target/release/annbench" -q run --dataset glove-twitter-25-angular --data-dir "$repo/datasets" \
    --config "$grid" --mariadb "$url" --label "nightly-$i" --results "$store" --runs 5 --min-time 250ms
done

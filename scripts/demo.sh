#!/usr/bin/env bash
# The demo: sets everything up on a fresh machine, then runs a real sweep of MariaDB MHNSW and
# pgvector HNSW (vector and halfvec) on the bundled glove-twitter-25-angular set and prints the
# best-QPS-at-recall table, and writes the HTML report (results/report.html). Extra arguments go
# to `annbench run` (e.g. --runs 10); the demo's pass lengths (--runs 6 --min-time 250ms
# --max-time 2s, about 3 s a point, the sweep within 3 minutes on 2 cores) apply unless given.
set -euo pipefail
# Bold headings on a terminal; plain text in logs (no escape codes in a redirected file).
log() { if [ -t 2 ]; then printf '\033[1m==> %s\033[0m\n' "$*" >&2; else printf '==> %s\n' "$*" >&2; fi; }
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=setup.sh
source scripts/setup.sh
log "the demo: about 3 minutes once built; the first run builds first (about 7 minutes on 2 cores)"

log "starting MariaDB and PostgreSQL + pgvector (scripts/databases.sh up)"
scripts/databases.sh up
eval "$(scripts/databases.sh env)"

export CARGO_TARGET_DIR="$repo/target"
annbench="$CARGO_TARGET_DIR/release/annbench"
if [ -x "$annbench" ]; then
  log "building annbench (release): up to date in seconds unless the sources changed"
else
  log "building annbench (release): the first build compiles HDF5 and the Rust core, about 7 minutes on 2 cores"
fi
# cargo's own progress (a bar on a terminal, a line per crate in a log).
cargo build --release

dataset=glove-twitter-25-angular
passes=()
for opt in --runs --min-time --max-time; do
  case " $* " in *" $opt "* | *" $opt="*) ;; *) passes+=("$opt") ;; esac
done
pass_args=()
for opt in "${passes[@]}"; do
  case "$opt" in
  --runs) pass_args+=(--runs 6) ;;
  --min-time) pass_args+=(--min-time 250ms) ;;
  --max-time) pass_args+=(--max-time 2s) ;;
  esac
done
log "sweep on $dataset (results in results/)"
"$annbench" run --dataset "$dataset" "${pass_args[@]}" \
  --algorithm mariadb --algorithm pgvector --algorithm pgvector_halfvec \
  --config scripts/demo-grids/mariadb.yml --config scripts/demo-grids/pgvector.yml \
  --config scripts/demo-grids/pgvector_halfvec.yml "$@"

log "best QPS at recall"
"$annbench" table --dataset "$dataset"
"$annbench" table --dataset "$dataset" --format blocks --base mariadb --recall 0.99,0.95,0.9

log "HTML report (open it in a browser; it needs no network)"
"$annbench" report --dataset "$dataset" --output results/report.html

#!/usr/bin/env bash
# A sharded sweep on one machine, as a cluster would run it: N shards at once, each with its own
# MariaDB + PostgreSQL pair (scripts/databases.sh with a cache dir per shard) and its own results
# directory; then `annbench merge`, and a check that the merged store holds the whole plan.
# Arguments are `annbench run` arguments (no --results, no --shard). See docs/distributed.md.
#
#   scripts/shards-local.sh --dataset sift-5k-128-euclidean --config scripts/demo-grids/mariadb.yml \
#       --config scripts/demo-grids/pgvector.yml --runs 1
#
#   SHARDS=3                       how many shards
#   WORK=/tmp/annbench-shards      servers, stores and logs (each server pair's root is ~2 GB)
#   CLEAN=1                        stop the servers and delete WORK's server dirs at the end
#   ANNBENCH=target/release/annbench
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shards="${SHARDS:-3}"
work="${WORK:-/tmp/annbench-shards}"
annbench="${ANNBENCH:-$repo/target/release/annbench}"
# Bold headings on a terminal; plain text in logs (no escape codes in a redirected file).
log() { if [ -t 2 ]; then printf '\033[1m==> %s\033[0m\n' "$*" >&2; else printf '==> %s\n' "$*" >&2; fi; }
if [ "$#" -eq 0 ]; then
    sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
[ -x "$annbench" ] || { echo "error: $annbench not found: cargo build --release" >&2; exit 1; }
mkdir -p "$work"

servers() { echo "$work/servers-$1"; }
stop_all() {
    for i in $(seq 1 "$shards"); do
        ANNBENCH_CACHE_DIR="$(servers "$i")" "$repo/scripts/databases.sh" down >/dev/null 2>&1 || true
        if [ "${CLEAN:-0}" = 1 ]; then rm -rf "$(servers "$i")"; fi
    done
}
if [ "${CLEAN:-0}" = 1 ]; then trap stop_all EXIT; fi

for i in $(seq 1 "$shards"); do
    log "server pair $i of $shards ($(servers "$i"))"
    ANNBENCH_CACHE_DIR="$(servers "$i")" "$repo/scripts/databases.sh" up >"$work/servers-$i.log" 2>&1 ||
        { cat "$work/servers-$i.log" >&2; exit 1; }
done

log "$shards shards at once"
pids=()
for i in $(seq 1 "$shards"); do
    rm -rf "$work/results-$i"
    (
        export ANNBENCH_CACHE_DIR
        ANNBENCH_CACHE_DIR="$(servers "$i")"
        eval "$("$repo/scripts/databases.sh" env)"
        exec "$annbench" run "$@" --shard "$i/$shards" --results "$work/results-$i"
    ) >"$work/shard-$i.log" 2>&1 &
    pids+=("$!")
done
failed=0
for i in $(seq 1 "$shards"); do
    if wait "${pids[$((i - 1))]}"; then
        echo "shard $i/$shards: $(grep -E 'point\(s\) measured' "$work/shard-$i.log" || echo done)"
    else
        echo "shard $i/$shards failed (log: $work/shard-$i.log):" >&2
        tail -5 "$work/shard-$i.log" >&2
        failed=1
    fi
done
[ "$failed" = 0 ] || exit 1

log "merge"
rm -rf "$work/merged"
results=()
for i in $(seq 1 "$shards"); do results+=("$work/results-$i"); done
"$annbench" merge "${results[@]}" --results "$work/merged" --complete

log "the merged store against the unsharded plan"
check="$("$annbench" run "$@" --dry-run --results "$work/merged")"
summary="$(printf '%s\n' "$check" | grep -E '^[0-9]+ build\(s\), [0-9]+ point\(s\)')"
echo "$summary"
planned="$(printf '%s\n' "$summary" | sed -E 's/^[0-9]+ build\(s\), ([0-9]+) point.*/\1/')"
files="$(find "$work/merged" -name '*.hdf5' ! -name '.*' | wc -l)"
echo "point files in the merged store: $files; points in the plan: $planned"
if ! printf '%s\n' "$summary" | grep -q ': 0 to measure' || [ "$files" != "$planned" ]; then
    echo "error: the merged store is not the plan" >&2
    exit 1
fi
echo "ok: the $shards shards cover the plan exactly once"

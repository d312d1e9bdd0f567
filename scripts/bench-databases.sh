#!/usr/bin/env bash
# The four HNSW indexes side by side, one per database or column type (docs/bench-databases.md):
# mariadb, pgvector, pgvector_halfvec and redis at M=16 (scripts/compare-grids/), on the bundled
# glove-twitter-25-angular and on clustered-1536-100k-2kq-angular (the 100,000 x 1536 rows of the
# generated clustered-1536-100k-angular with its first 2,000 queries, so that a pass takes about
# a second; ground truth recomputed). Prints the best-QPS-at-recall tables and the build tables.
#   scripts/bench-databases.sh [RESULTS_DIR]      (default: results/bench-databases)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
results="${1:-results/bench-databases}"
annbench="${ANNBENCH:-target/release/annbench}"
algorithms=(mariadb pgvector pgvector_halfvec redis)
args=()
for a in "${algorithms[@]}"; do args+=(--algorithm "$a" --config "scripts/compare-grids/$a.yml"); done

if [ ! -e data/clustered-1536-100k-2kq-angular.hdf5 ]; then
    [ -e data/clustered-1536-100k-angular.hdf5 ] || "$annbench" datasets generate clustered-1536-100k-angular
    "$annbench" datasets subset clustered-1536-100k-angular --train 100000 --test 2000 \
        --name clustered-1536-100k-2kq-angular
fi
for dataset in glove-twitter-25-angular clustered-1536-100k-2kq-angular; do
    "$annbench" run --dataset "$dataset" "${args[@]}" --results "$results" --runs 5 --min-time 1
    echo "## $dataset"
    "$annbench" table --dataset "$dataset" --results "$results"
    "$annbench" table --dataset "$dataset" --results "$results" --builds
done

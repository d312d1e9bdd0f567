#!/usr/bin/env bash
# The four HNSW indexes side by side, one per database or column type (docs/bench-databases.md):
# mariadb, pgvector, pgvector_halfvec and redis at M=16 (scripts/compare-grids/), on the bundled
# glove-twitter-25-angular and on clustered-1536-100k-angular (100,000 x 1536, generated with its
# ground truth). Prints the best-QPS-at-recall tables and the build tables.
#   scripts/bench-databases.sh [RESULTS_DIR]      (default: results/bench-databases)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
results="${1:-results/bench-databases}"
annbench="${ANNBENCH:-target/release/annbench}"
algorithms=(mariadb pgvector pgvector_halfvec redis)
args=()
for a in "${algorithms[@]}"; do args+=(--algorithm "$a" --config "scripts/compare-grids/$a.yml"); done

for dataset in glove-twitter-25-angular clustered-1536-100k-angular; do
    if [ "$dataset" = clustered-1536-100k-angular ] && [ ! -e "data/$dataset.hdf5" ]; then
        "$annbench" datasets generate "$dataset"
    fi
    "$annbench" run --dataset "$dataset" "${args[@]}" --results "$results" --runs 5 --min-time 1
    echo "## $dataset"
    "$annbench" table --dataset "$dataset" --results "$results"
    "$annbench" table --dataset "$dataset" --results "$results" --builds
done

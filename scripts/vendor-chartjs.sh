#!/usr/bin/env bash
# Refreshes the Chart.js file that `annbench report` embeds (src/report/html/vendor/) from the
# npm registry: scripts/vendor-chartjs.sh 4.6.1. Prints the hashes for vendor/README.md.
set -euo pipefail
version="${1:?usage: scripts/vendor-chartjs.sh VERSION}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo/src/report/html/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "chart.js@$version" >/dev/null && tar xzf chart.js-*.tgz)
cp "$work/package/dist/chart.umd.min.js" "$dest/chart.umd.min.js"
cp "$work/package/LICENSE.md" "$dest/chart.js-LICENSE.md"
echo "chart.js $version -> $dest"
echo "npm integrity: $(npm view "chart.js@$version" dist.integrity)"
sha256sum "$dest/chart.umd.min.js"

#!/usr/bin/env bash
# Installs a wheel as a user does and uses it: a fresh venv, a PATH with no cargo, rustc or
# cmake on it, `pip install WHEEL` with its dependencies from the package index (wheels only:
# nothing may be compiled), then, from that venv and outside the repository: import annbench,
# load a bundled set, a small sweep against the real servers (ANNBENCH_MARIADB_URL,
# ANNBENCH_POSTGRES_URL), a plot written to a file, and `annbench --version`.
#
#   scripts/wheel-check.sh dist/annbench-*.whl
#
# Prints the install's seconds. Run by scripts/test.sh on the wheel scripts/wheel.sh built.
set -euo pipefail
log() { if [ -t 2 ]; then printf '\033[1m==> %s\033[0m\n' "$*" >&2; else printf '==> %s\n' "$*" >&2; fi; }
[ "$#" -eq 1 ] && [ -f "$1" ] || {
  echo "usage: scripts/wheel-check.sh dist/annbench-VERSION-*.whl (the wheel scripts/wheel.sh built)" >&2; exit 2; }
wheel="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
version="$(basename "$wheel" | cut -d- -f2)"
for var in ANNBENCH_MARIADB_URL ANNBENCH_POSTGRES_URL; do
  [ -n "${!var:-}" ] || {
    echo "error: $var is not set; start the servers and export their URLs: eval \"\$(scripts/databases.sh env)\"" >&2; exit 1; }
done
# The user's PATH: no directory with cargo, rustc or cmake in it (~/.cargo/bin, the project's
# venv with PyPI's cmake) and no other virtualenv; where a system directory that holds python3
# also has one of them, a stub in front of it fails the install if it is ever called.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/no-toolchain"
for tool in cargo rustc cmake; do
  printf '#!/bin/sh\necho "error: %s was called while installing the wheel" >&2\nexit 1\n' "$tool" \
    >"$scratch/no-toolchain/$tool"
  chmod +x "$scratch/no-toolchain/$tool"
done
clean="$scratch/no-toolchain"
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -n "$dir" ] && [ ! -e "$dir/activate" ] || continue
  if [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ] || [ -e "$dir/cmake" ]; then
    [ -e "$dir/python3" ] || continue
  fi
  clean="$clean:$dir"
done
python="$(PATH="$clean" command -v python3)" || {
  echo "error: no python3 on PATH outside virtualenvs and ~/.cargo/bin ($clean)" >&2; exit 1; }

venv="$scratch/venv"
"$python" -m venv "$venv"
cd "$scratch"
log "pip install $(basename "$wheel") in a fresh venv (no cargo, rustc or cmake on PATH)"
started=$EPOCHREALTIME
PATH="$venv/bin:$clean" pip install --quiet --disable-pip-version-check --only-binary=:all: "$wheel"
seconds=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
log "installed in $seconds s"

log "import, load_dataset, a sweep against the servers, a plot, annbench --version"
PATH="$venv/bin:$clean" python - "$venv" <<'PYTHON'
import sys
from pathlib import Path

import annbench

venv = Path(sys.argv[1])
package = Path(annbench.__file__).parent
assert package.is_relative_to(venv), f"annbench imported from {package}, not from {venv}"
for stub in ("_annbench.pyi", "py.typed"):
    assert (package / stub).is_file(), f"the wheel lacks the type stub {stub}"

name = "sift-5k-128-euclidean"
ds = annbench.load_dataset(name)  # bundled in the module: no download, no repository
assert ds.train.shape == (4500, 128) and ds.neighbors.shape[0] == ds.test.shape[0] == 500, (
    ds.train.shape, ds.test.shape)

df = annbench.run(
    name, ["mariadb", "pgvector"],
    build={"m": [8], "ef_construction": [32]}, query={"ef_search": [40]},
    runs=1, min_time=0.05, results="results", progress=False,
)
assert sorted(df["algorithm"]) == ["mariadb", "pgvector"], df
assert (df["recall"] > 0.5).all() and (df["qps"] > 0).all(), df[["algorithm", "recall", "qps"]]

annbench.plot.qps_recall(annbench.results(name, results="results"), "qps.png", raw=True)
head = Path("qps.png").read_bytes()[:8]
assert head == b"\x89PNG\r\n\x1a\n", f"qps.png is not a PNG: {head!r}"
print(f"{len(df)} points measured (recall {', '.join(f'{r:.3f}' for r in df['recall'])}); "
      f"qps.png {Path('qps.png').stat().st_size} bytes")
PYTHON
said="$(PATH="$venv/bin:$clean" annbench --version)"
[ "$said" = "annbench $version" ] || { echo "error: annbench --version said '$said', not 'annbench $version'" >&2; exit 1; }
log "$said: the wheel works without a Rust toolchain (install $seconds s)"

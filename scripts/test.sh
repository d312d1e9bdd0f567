#!/usr/bin/env bash
# The test command: sets everything up on a fresh machine (tools, both database servers), runs
# the Rust tests, builds the release wheel (scripts/wheel.sh), installs it as a user does
# (scripts/wheel-check.sh) and runs the Python tests against it, all against the real servers.
set -euo pipefail
# Bold headings on a terminal; plain text in logs (no escape codes in a redirected file).
log() { if [ -t 2 ]; then printf '\033[1m==> %s\033[0m\n' "$*" >&2; else printf '==> %s\n' "$*" >&2; fi; }
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=setup.sh
source scripts/setup.sh

# The HTML report's browser test drives Debian's chromium through its chromedriver.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: chromium and chromedriver are missing; as root: apt-get install chromium chromium-driver fonts-dejavu-core" >&2
    exit 1
  fi
  log "installing chromium and chromium-driver (apt-get) for the report's browser test"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver fonts-dejavu-core >/dev/null
fi

log "starting MariaDB and PostgreSQL + pgvector (scripts/databases.sh up)"
scripts/databases.sh up
scripts/databases.sh up-legacy
# A second server of each SQL engine with the main one's settings, for the interleaved-run
# tests (ANNBENCH_MARIADB_TWIN_URL, ANNBENCH_POSTGRES_TWIN_URL): seconds the first time, then
# found running.
scripts/databases.sh up-instance twin mariadb
scripts/databases.sh up-instance twin postgres
# A third of each, which tests/runner_memory.rs restarts with less memory than its index
# (run --memory, restart-instance --memory; ANNBENCH_*_MEMTEST_URL); small logs, little disk.
scripts/databases.sh up-instance memtest mariadb innodb_log_file_size=64M
scripts/databases.sh up-instance memtest postgres max_wal_size=256MB
eval "$(scripts/databases.sh env)"

# One target dir: the Rust tests' build in target/release, the wheel's (zig, manylinux) in
# target/<host triple>/release.
export CARGO_TARGET_DIR="$repo/target"
log "cargo fmt --check, clippy"
cargo fmt --all -- --check
cargo clippy --release --all-targets --features python -- -D warnings

log "Rust tests (real servers)"
# Among them tests/shards_sweep.rs: a sweep split in three shards that run at once against these
# servers (a database/schema each), merged and checked against the unsharded plan.
cargo test --release

# Apache Otava (PyPI apache-otava), whose change points `annbench history` must match
# (tests/python/test_history_otava.py): in a venv of its own, as it pins numpy and scipy.
otava_venv="${ANNBENCH_VENV}-otava"
if [ ! -x "$otava_venv/bin/otava" ]; then
  log "installing apache-otava into $otava_venv (the change point cross-check)"
  python3 -m venv "$otava_venv"
  "$otava_venv/bin/python" -m pip install --quiet --disable-pip-version-check 'apache-otava==0.8.0'
fi
export ANNBENCH_OTAVA="$otava_venv/bin/otava"

log "the release wheel and sdist (scripts/wheel.sh)"
scripts/wheel.sh
wheel="$(ls dist/annbench-*.whl)"
log "the wheel installed as a user does (scripts/wheel-check.sh)"
scripts/wheel-check.sh "$wheel"

log "Python tests against the wheel"
# The same file a user gets, with the test extras; --force-reinstall: pip would keep an
# annbench of the same version already in the venv (an earlier build).
"$ANNBENCH_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[test]"
"$ANNBENCH_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
"$ANNBENCH_VENV/bin/python" -m mypy.stubtest annbench._annbench
"$ANNBENCH_VENV/bin/python" -m mypy python/annbench
# Screenshots of the report's views (the browser test) land in artifacts/screenshots/; the
# example notebook, executed headless with its plots (test_notebook.py), in artifacts/annbench.ipynb.
"$ANNBENCH_VENV/bin/python" -m pytest -q tests/python
log "report screenshots: $repo/artifacts/screenshots/"
log "executed example notebook: $repo/artifacts/annbench.ipynb"

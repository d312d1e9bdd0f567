#!/usr/bin/env bash
# Prepares a fresh machine for annbench's build, demo and tests; idempotent and quick when done.
#   - a current CMake (hdf5-metno builds HDF5 statically and needs CMake >= 3.26; Debian 12 has 3.25),
#   - a Python virtualenv (default .venv) with the build, wheel and test tools.
# Sourced by scripts/demo.sh and scripts/test.sh; it exports PATH and ANNBENCH_VENV.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ANNBENCH_VENV="${ANNBENCH_VENV:-$repo/.venv}"

# Bold headings on a terminal; plain text in logs (no escape codes in a redirected file).
log() { if [ -t 2 ]; then printf '\033[1m==> %s\033[0m\n' "$*" >&2; else printf '==> %s\n' "$*" >&2; fi; }

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || { echo "error: cargo not found; install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
command -v cc >/dev/null 2>&1 || { echo "error: no C compiler (cc) found; install gcc (apt-get install gcc)" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "error: python3 not found; install Python 3.9+ with pip and venv" >&2; exit 1; }

if [ ! -x "$ANNBENCH_VENV/bin/python" ]; then
  log "creating Python virtualenv $ANNBENCH_VENV"
  python3 -m venv "$ANNBENCH_VENV" || {
    echo "error: python3 -m venv failed; on Debian/Ubuntu: apt-get install python3-venv" >&2; exit 1; }
fi
# Tools for building HDF5 and the wheel (scripts/wheel.sh: maturin links with PyPI's zig for
# manylinux_2_28; auditwheel checks the tag), and for the Python tests.
if ! "$ANNBENCH_VENV/bin/python" -c 'import cmake, maturin, ziglang, auditwheel, pytest, mypy' >/dev/null 2>&1; then
  log "installing build and test tools into $ANNBENCH_VENV (cmake, maturin, ziglang, auditwheel, pytest, mypy)"
  "$ANNBENCH_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    'cmake>=3.26' 'maturin>=1.16,<2' 'ziglang>=0.17,<0.18' 'auditwheel>=6' pytest mypy
fi
export PATH="$ANNBENCH_VENV/bin:$PATH"

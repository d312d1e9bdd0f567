#!/usr/bin/env bash
# Builds what a release publishes into dist/: the wheel (cp39-abi3, manylinux_2_28: one file
# serves every CPython >= 3.9 on any Linux with glibc >= 2.28) and the sdist, then checks the
# wheel as PyPI and a user's machine would see it.
#
# maturin links with zig (PyPI's ziglang) against glibc 2.28's symbols, so this machine's newer
# glibc leaks into nothing; HDF5 is built by CMake with the same zig compiler (maturin hands
# cmake-rs a toolchain file) and linked statically. Checks: `auditwheel show` accepts the
# manylinux_2_28 tag the file carries, and the extension module needs no library beyond
# glibc's own (readelf -d).
#
#   scripts/wheel.sh                  # build for this machine's architecture, then check
#   scripts/wheel.sh --check WHEEL    # only check a wheel built before
#
# A full release compile: about 10 minutes on 2 cores, in $CARGO_TARGET_DIR/<target>/ (default
# target/, beside the test build's target/release, which it does not disturb).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ "${1:-}" = --check ] && [ -f "${2:-}" ] && set -- --check "$(realpath "$2")"
cd "$repo"
# shellcheck source=setup.sh
source scripts/setup.sh

tag=manylinux_2_28
if [ "${1:-}" = --check ]; then
  # The checks alone, on a wheel built before (or elsewhere).
  [ "$#" -eq 2 ] && [ -f "$2" ] || { echo "usage: scripts/wheel.sh [--check WHEEL]" >&2; exit 2; }
  wheel="$2"
else
  [ "$#" -eq 0 ] || { echo "usage: scripts/wheel.sh [--check WHEEL]" >&2; exit 2; }
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
  # This machine's architecture: a cross build cannot run HDF5's CMake test programs.
  target="$(rustc -vV | sed -n 's/^host: //p')"
  version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
  # Only this build's files in dist/, so `dist/annbench-*.whl` names exactly one wheel.
  mkdir -p dist
  rm -f dist/annbench-*.whl dist/annbench-*.tar.gz
  log "wheel for $target ($tag, zig) into dist/"
  # No line tables (the test build keeps them) and --strip: a smaller module, a smaller build.
  CARGO_PROFILE_RELEASE_DEBUG=false maturin build --release --strip --zig \
    --compatibility "$tag" --target "$target" --out dist
  log "sdist into dist/"
  maturin sdist --out dist
  wheels=(dist/annbench-"$version"-*.whl)
  [ "${#wheels[@]}" -eq 1 ] && [ -f "${wheels[0]}" ] || {
    echo "error: expected one wheel dist/annbench-$version-*.whl, found: ${wheels[*]}" >&2; exit 1; }
  wheel="${wheels[0]}"
fi

version="$(basename "$wheel" | cut -d- -f2)"
case "$(basename "$wheel")" in
annbench-*-cp39-abi3-"$tag"_*.whl) ;;
*) echo "error: $wheel is not tagged cp39-abi3-${tag}_<arch>" >&2; exit 1 ;;
esac
log "auditwheel show $wheel"
audit="$(auditwheel show "$wheel")"
printf '%s\n' "$audit"
# auditwheel names the most compatible tag the file's symbol versions allow: ours or an older one.
allowed="$(printf '%s\n' "$audit" | tr -s ' \n' ' ' |
  sed -n 's/.*consistent with the following platform tag: "manylinux_2_\([0-9]*\)_.*/\1/p')"
[ -n "$allowed" ] && [ "$allowed" -le "${tag#manylinux_2_}" ] || {
  echo "error: auditwheel does not accept $tag for $wheel (above: the tag its symbols need)" >&2; exit 1; }

# The extension module needs only glibc's own libraries (HDF5 is linked in).
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
python3 -m zipfile -e "$wheel" "$unpacked"
so="$(find "$unpacked" -name '_annbench*.so')"
needed="$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
log "$(basename "$so") needs: $needed"
for lib in $needed; do
  case "$lib" in
  libc.so.6 | libm.so.6 | libgcc_s.so.1 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-*.so.*) ;;
  *) echo "error: the extension module needs $lib, which a plain glibc system lacks" >&2; exit 1 ;;
  esac
done
for file in annbench/_annbench.pyi annbench/py.typed; do
  [ -f "$unpacked/$file" ] || { echo "error: $wheel lacks $file (the type stubs)" >&2; exit 1; }
done
grep -qE '^annbench ?= ?annbench\.cli:main$' "$unpacked/annbench-$version.dist-info/entry_points.txt" || {
  echo "error: $wheel lacks the annbench console script" >&2; exit 1; }
log "$(basename "$wheel"): $(du -k "$wheel" | awk '{printf "%.1f MB", $1 / 1024}'), accepted as $tag"

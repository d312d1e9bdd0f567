#!/usr/bin/env bash
# Start, stop and describe the MariaDB (>= 11.7) and PostgreSQL + pgvector servers annbench
# benchmarks against, on loopback only. See docs/servers.md.
#
#   scripts/databases.sh up          start both (build a Debian 13 root first if the host lacks them)
#   scripts/databases.sh down        stop every server this script started (then the cache dir can be deleted)
#   scripts/databases.sh restart     down, then up (to apply new tuning overrides)
#   scripts/databases.sh status      what runs where
#   scripts/databases.sh urls        the connection URLs, password masked
#   scripts/databases.sh env         `export ...` lines with the full URLs, for eval
#   scripts/databases.sh up-legacy   also start the host's MariaDB 10.11 (a real too-old server)
#
# Everything lives under ${ANNBENCH_CACHE_DIR:-$HOME/.cache/annbench}; the URLs are written to
# servers.env there (mode 0600), which annbench reads when no URL is given.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/databases-common.sh
source "$HERE/lib/databases-common.sh"
# shellcheck source=scripts/lib/databases-root.sh
source "$HERE/lib/databases-root.sh"
# shellcheck source=scripts/lib/databases-mariadb.sh
source "$HERE/lib/databases-mariadb.sh"
# shellcheck source=scripts/lib/databases-postgres.sh
source "$HERE/lib/databases-postgres.sh"

usage() {
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

cmd_up() {
    take_lock
    load_state
    detect_modes
    if [ "$MARIADB_MODE" = root ] || [ "$POSTGRES_MODE" = root ]; then
        ensure_root
    fi
    mariadb_up main
    postgres_up
    save_state
    write_env_file
    print_urls
}

cmd_up_legacy() {
    take_lock
    load_state
    ensure_legacy_binaries
    mariadb_up legacy
    save_state
    write_env_file
    print_urls
}

cmd_down() {
    take_lock
    load_state
    mariadb_down main
    mariadb_down legacy
    postgres_down
    # With no server left in it, the root's /proc and /dev/shm go too (`up` mounts them again),
    # so the cache dir can be deleted with a plain rm -rf.
    if [ -d "$ROOT" ]; then umount_root_at "$ROOT"; fi
}

cmd_status() {
    load_state
    detect_modes
    mariadb_status main
    postgres_status
    if [ -n "${LEGACY_PORT:-}" ]; then mariadb_status legacy; fi
    if [ -f "$ENV_FILE" ]; then say "URLs: $ENV_FILE"; fi
}

case "${1:-}" in
up) cmd_up ;;
up-legacy) cmd_up_legacy ;;
down) cmd_down ;;
restart) cmd_down && cmd_up ;;
status) cmd_status ;;
urls)
    load_state
    print_urls
    ;;
env)
    [ -f "$ENV_FILE" ] || die "no $ENV_FILE yet: run scripts/databases.sh up"
    grep -E '^[A-Z_]+=' "$ENV_FILE" | sed 's/^/export /'
    ;;
-h | --help | help) usage ;;
*)
    usage >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Start, stop and describe the database servers annbench benchmarks against (MariaDB >= 11.7,
# PostgreSQL + pgvector, Redis 8), on loopback only. See docs/servers.md.
#
#   scripts/databases.sh up          start them all (build a Debian 13 root first if the host lacks them)
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
# Every lib/databases-<db>.sh but these two is a database ("engine"; see databases-common.sh).
engines_load

usage() {
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

each_engine() {
    local e
    for e in $ENGINES; do "${e}_$1"; done
}

cmd_up() {
    take_lock
    load_state
    detect_modes
    if any_root_mode; then
        ensure_root
    fi
    local e
    for e in $ENGINES; do
        "${e}_up"
        # After each: the ports of servers already started stay remembered if a later one fails.
        save_state
    done
    write_env_file
    print_urls
}

cmd_down() {
    take_lock
    load_state
    each_engine down
    # With no server left in it, the root's /proc and /dev/shm go too (`up` mounts them again),
    # so the cache dir can be deleted with a plain rm -rf.
    if [ -d "$ROOT" ]; then umount_root_at "$ROOT"; fi
}

cmd_status() {
    local e
    load_state
    detect_modes
    each_engine status
    for e in $ENGINES; do
        if declare -F "${e}_status_extra" >/dev/null; then "${e}_status_extra"; fi
    done
    if [ -f "$ENV_FILE" ]; then say "URLs: $ENV_FILE"; fi
}

# An engine's own subcommand (<db>_cmd_<name>), e.g. MariaDB's up-legacy.
engine_cmd() {
    local e f="${1//-/_}"
    case "$f" in *[!a-z0-9_]* | "") return 1 ;; esac
    for e in $ENGINES; do
        if declare -F "${e}_cmd_$f" >/dev/null; then
            "${e}_cmd_$f"
            return 0
        fi
    done
    return 1
}

case "${1:-}" in
up) cmd_up ;;
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
    if ! engine_cmd "${1:-}"; then
        usage >&2
        exit 2
    fi
    ;;
esac

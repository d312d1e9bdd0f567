#!/usr/bin/env bash
# Start, stop and describe the database servers annbench benchmarks against (MariaDB >= 11.7,
# PostgreSQL + pgvector, Redis 8), on loopback only. See docs/servers.md.
#
#   scripts/databases.sh up          start them all (build a Debian 13 root first if the host lacks them)
#   scripts/databases.sh down        stop every server this script started, instances too
#   scripts/databases.sh restart     down, then up (to apply new tuning overrides); running instances too
#   scripts/databases.sh status      what runs where
#   scripts/databases.sh urls        the connection URLs, password masked
#   scripts/databases.sh env         `export ...` lines with the full URLs, for eval
#   scripts/databases.sh up-legacy   also start the host's MariaDB 10.11 (a real too-old server)
#   scripts/databases.sh up-instance NAME ENGINE[@VERSION] [--memory SIZE [--via WAY]] [SETTING=VALUE ...]
#                                    an extra server of ENGINE (mariadb, postgres, redis) with these
#                                    settings, e.g. up-instance pg18 postgres@18 (from Debian sid);
#                                    --memory 64M: its caches at 64M, read past the OS cache (WAY
#                                    settings, the default) or its processes limited (WAY cgroup);
#                                    see docs/memory.md
#   scripts/databases.sh down-instance ID [--delete]   stop it (--delete: and delete its data)
#   scripts/databases.sh restart-instance ID [--memory SIZE|off [--via WAY]]
#                                    stop one server cleanly, start it again (with this memory)
#       ID: ENGINE:NAME (e.g. postgres:pg18), a NAME only one engine has, or an engine for its main server
#
# Everything lives under ${ANNBENCH_CACHE_DIR:-$HOME/.cache/annbench}; the URLs are written to
# servers.env there (mode 0600), which annbench reads when no URL is given.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/databases-common.sh
source "$HERE/lib/databases-common.sh"
# shellcheck source=scripts/lib/databases-root.sh
source "$HERE/lib/databases-root.sh"
# shellcheck source=scripts/lib/databases-instances.sh
source "$HERE/lib/databases-instances.sh"
# shellcheck source=scripts/lib/databases-memory.sh
source "$HERE/lib/databases-memory.sh"
# Every lib/databases-<db>.sh but these four is a database ("engine"; see databases-common.sh).
engines_load

usage() {
    # The comment block at the top, up to its first non-comment line.
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
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
    detect_modes
    instances_down
    each_engine down
    # With no server left in them, the roots' /proc and /dev/shm go too (`up` mounts them
    # again), so the cache dir can be deleted with a plain rm -rf.
    local r
    for r in "$CACHE"/debian-*; do
        if [ -d "$r" ]; then umount_root_at "$r"; fi
    done
}

# down, then up, then the instances that were running.
cmd_restart() {
    local running e n
    load_state
    detect_modes
    running="$(instances_running)"
    cmd_down
    cmd_up
    while read -r e n; do
        [ -n "$n" ] || continue
        instance_load "$e" "$n"
        instance_up 0
    done <<<"$running"
    if [ -n "$running" ]; then write_env_file; fi
}

cmd_status() {
    local e
    load_state
    detect_modes
    each_engine status
    for e in $ENGINES; do
        if declare -F "${e}_status_extra" >/dev/null; then "${e}_status_extra"; fi
    done
    instances_status
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
restart) cmd_restart ;;
status) cmd_status ;;
urls)
    load_state
    print_urls
    ;;
env)
    [ -f "$ENV_FILE" ] || die "no $ENV_FILE yet: run scripts/databases.sh up"
    grep -E '^[A-Z_][A-Z0-9_]*=' "$ENV_FILE" | sed 's/^/export /'
    ;;
up-instance)
    shift
    cmd_up_instance "$@"
    ;;
down-instance)
    shift
    cmd_down_instance "$@"
    ;;
restart-instance)
    shift
    cmd_restart_instance "$@"
    ;;
-h | --help | help) usage ;;
*)
    if ! engine_cmd "${1:-}"; then
        usage >&2
        exit 2
    fi
    ;;
esac

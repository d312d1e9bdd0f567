# Shared settings and helpers for scripts/databases.sh (sourced, not run).
# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the other sourced files

CACHE="${ANNBENCH_CACHE_DIR:-${HOME:-/root}/.cache/annbench}"
ROOT="$CACHE/debian-trixie"          # the Debian 13 root, when the host lacks new enough servers
STATE_FILE="$CACHE/state.env"        # remembered ports and password (0600)
ENV_FILE="$CACHE/servers.env"        # the URLs annbench reads with no flags (0600)
LOG_DIR="$CACHE/logs"
DB_NAME=annbench
DB_USER=annbench

say() { printf '%s\n' "$*"; }
warn() { printf 'databases.sh: warning: %s\n' "$*" >&2; }
die() {
    printf 'databases.sh: error: %s\n' "$*" >&2
    exit 1
}

is_root() { [ "$(id -u)" = 0 ]; }

# One `up`/`down` at a time per cache dir (several checkouts may share one cache). The lock fd
# is closed for every server process we start (9>&-), so a server never keeps it.
take_lock() {
    mkdir -p "$CACHE" "$LOG_DIR"
    exec 9>"$CACHE/.lock"
    if command -v flock >/dev/null; then flock 9; fi
}

# --- The engine registry -------------------------------------------------------------------
# A database is one file, lib/databases-<db>.sh (an "engine"), that defines these functions
# (<db>: lower-case letters and digits; its variables are named <DB>_..., upper-case):
#   <db>_packages         the Debian packages it needs in the Debian 13 root (one line)
#   <db>_state            the state.env variables it owns (its ports), e.g. MARIADB_PORT
#   <db>_detect FROM      set <DB>_MODE to host or root (FROM: auto, host or root, from
#                         ANNBENCH_SERVERS_FROM) and the binaries it uses; die when FROM is host
#                         and the host lacks a new enough server
#   <db>_up               start it (or find it running) and create its user/database
#   <db>_down             stop what it started
#   <db>_status           one line per server: "<Name> <version>: running, pid ..." or "<Name>: stopped"
#   <db>_env_lines PW     its servers.env lines with password PW (called with '***' for `urls`):
#                         ANNBENCH_<DB>_URL=... for its main server, then any others
# and optionally
#   <db>_status_extra     status lines printed after every engine's <db>_status (secondary servers)
#   <db>_cmd_<name>       an extra subcommand: `databases.sh <name>` (dashes as underscores)
# scripts/databases.sh sources every engine and calls these in ENGINES order: mariadb, postgres,
# then the rest alphabetically. Nothing else names a database.
LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

engines_discover() {
    local f e rest=()
    ENGINES=""
    for f in "$LIB_DIR"/databases-*.sh; do
        [ -f "$f" ] || continue
        e="${f##*/databases-}"
        e="${e%.sh}"
        case "$e" in
        common | root | instances | memory) continue ;;
        mariadb | postgres) ;;
        *[!a-z0-9]* | [!a-z]*) die "engine file $f: the name after databases- must be lower-case letters and digits" ;;
        *) rest+=("$e") ;;
        esac
    done
    for e in mariadb postgres; do
        [ -f "$LIB_DIR/databases-$e.sh" ] && ENGINES="$ENGINES${ENGINES:+ }$e"
    done
    if [ ${#rest[@]} -gt 0 ]; then
        ENGINES="$ENGINES${ENGINES:+ }$(printf '%s\n' "${rest[@]}" | LC_ALL=C sort | tr '\n' ' ')"
        ENGINES="${ENGINES% }"
    fi
}

# Source every engine file and check that it defines the required hooks.
engines_load() {
    local e h
    engines_discover
    for e in $ENGINES; do
        # shellcheck disable=SC1090
        source "$LIB_DIR/databases-$e.sh"
        for h in packages state detect up down status env_lines; do
            declare -F "${e}_$h" >/dev/null || die "engine $LIB_DIR/databases-$e.sh does not define ${e}_$h"
        done
    done
}

# The engine's mode (host | root) once detect_modes ran: <DB>_MODE.
engine_mode() {
    local v
    v="$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')_MODE"
    echo "${!v:-}"
}

# Every engine's state variables, in engine order.
state_vars() {
    local e
    for e in $ENGINES; do "${e}_state"; done | tr ' ' '\n' | sed '/^$/d'
}

# State: ports chosen so far and the generated password. Plain KEY=value lines.
load_state() {
    local v
    for v in $(state_vars); do printf -v "$v" '%s' ""; done
    DB_PASSWORD=""
    if [ -f "$STATE_FILE" ]; then
        # shellcheck disable=SC1090
        source "$STATE_FILE"
    fi
    if [ -n "${ANNBENCH_DB_PASSWORD:-}" ]; then DB_PASSWORD="$ANNBENCH_DB_PASSWORD"; fi
    if [ -z "$DB_PASSWORD" ]; then
        # Generated once per cache dir; letters and digits only so URLs need no escaping.
        DB_PASSWORD="$(LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c 24 || true)"
    fi
    case "$DB_PASSWORD" in
    *[!A-Za-z0-9_.~-]*) die "ANNBENCH_DB_PASSWORD may only contain letters, digits and _ . ~ -" ;;
    esac
}

# Lines of the old state file this checkout has no engine for are kept (another checkout of a
# later version may share the cache dir, and its servers must stay remembered).
save_state() {
    mkdir -p "$CACHE"
    local vars v
    vars="$(state_vars)"
    (
        umask 077
        {
            echo "# scripts/databases.sh state; keep private (0600)"
            for v in $vars; do echo "$v=${!v}"; done
            echo "DB_PASSWORD=$DB_PASSWORD"
            if [ -f "$STATE_FILE" ]; then
                grep -E '^[A-Z_][A-Z0-9_]*=' "$STATE_FILE" |
                    grep -vE "^($(printf '%s\n' "$vars" | tr '\n' '|')DB_PASSWORD)=" || true
            fi
        } >"$STATE_FILE.tmp"
        mv "$STATE_FILE.tmp" "$STATE_FILE"
    )
    chmod 600 "$STATE_FILE"
}

# Has any engine a remembered port (a server started from this cache dir)?
any_started() {
    local v
    for v in $(state_vars); do [ -z "${!v}" ] || return 0; done
    return 1
}

# Percent-encode everything but unreserved characters (socket paths inside URLs).
url_encode() {
    local s=$1 out="" c i
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case "$c" in
        [A-Za-z0-9._~-]) out+=$c ;;
        *) out+=$(printf '%%%02X' "'$c") ;;
        esac
    done
    echo "$out"
}

# The lines of servers.env (password $1) from every engine: first each engine's main URL
# (ANNBENCH_<DB>_URL), then the Unix socket URLs (*_SOCKET_URL), then the rest, each group in
# engine order; then the extra instances' URLs, this script's path and the servers it manages
# by port (databases-instances.sh).
env_lines() {
    local e
    for e in $ENGINES; do "${e}_env_lines" "$1"; done | awk '
        /^ANNBENCH_[A-Z0-9]+_URL=/ { print; next }
        /^[A-Z0-9_]+_SOCKET_URL=/ { sock[ns++] = $0; next }
        { rest[nr++] = $0 }
        END { for (i = 0; i < ns; i++) print sock[i]; for (i = 0; i < nr; i++) print rest[i] }'
    if declare -F instance_env_lines >/dev/null; then instance_env_lines "$1"; fi
}

write_env_file() {
    (
        umask 077
        {
            echo "# Written by scripts/databases.sh; annbench reads it when no URL is given."
            echo "# Contains the password: keep it private (0600)."
            env_lines "$DB_PASSWORD"
        } >"$ENV_FILE.tmp"
        mv "$ENV_FILE.tmp" "$ENV_FILE"
    )
    chmod 600 "$ENV_FILE"
}

print_urls() {
    if ! any_started; then
        say "no servers started yet from $CACHE: run scripts/databases.sh up"
        return 0
    fi
    # URLs only (not the path and port lines).
    env_lines '***' | grep -E '^[A-Z0-9_]+_URL=' | while IFS= read -r line; do say "$line"; done
    say "(full URLs in $ENV_FILE; annbench reads it with no flags; eval \"\$(scripts/databases.sh env)\" exports them)"
}

# True when something accepts connections on 127.0.0.1:PORT or any socket is bound to it.
port_busy() {
    local p=$1
    if command -v ss >/dev/null && [ -n "$(ss -Hltn "( sport = :$p )" 2>/dev/null)" ]; then
        return 0
    fi
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null
}

# The remembered port if free, else the next free one from it.
pick_port() {
    local p=$1 n=0
    while port_busy "$p"; do
        p=$((p + 1))
        n=$((n + 1))
        [ "$n" -lt 100 ] || die "no free port in $1..$p on 127.0.0.1"
    done
    if [ "$p" != "$1" ]; then warn "port $1 is taken by another program; using $p (remembered)"; fi
    echo "$p"
}

# Memory tuning, from the machine's RAM unless overridden (see docs/servers.md). The two
# settings that hold a vector index get the larger shares: MariaDB's MHNSW cache (queries) and
# PostgreSQL's maintenance_work_mem (pgvector keeps the whole HNSW graph there while it builds;
# 1M x 1536 at m=16 needs 6.4 GiB). The memory is taken lazily, and one server is benchmarked
# at a time. RAM / $1 in MiB:
ram_mb_over() { awk -v d="$1" '/^MemTotal:/ {printf "%d", $2 / d / 1024}' /proc/meminfo; }
ram_mb() { ram_mb_over 1; }

# "11.8.9" -> 0 when VERSION >= MIN (both dotted), else 1.
version_ge() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

# Is PID alive and is its command NAME? A zombie is not alive: a server killed with -9 stays one
# until its parent reaps it (forever, where PID 1 does not reap), and must not count as running.
pid_is() {
    local pid=$1 name=$2 stat
    [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
    stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
    # Field 3, after the parenthesised command: R, S, D... alive; Z or X dead.
    case "${stat##*) }" in
    Z* | X*) return 1 ;;
    esac
}

# Is PID a process that has not exited (whatever its command: a server being exec'ed by
# setsid or chroot)? A zombie has exited.
pid_alive() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    case "${stat##*) }" in
    Z* | X*) return 1 ;;
    esac
}

# Pids of live processes whose working directory is DIR (a server's leftovers: PostgreSQL's
# processes run in their data directory), space-separated.
procs_in_dir() {
    local dir p pid out=""
    dir="$(readlink -f "$1")"
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/cwd" 2>/dev/null)" = "$dir" ] || continue
        pid="${p#/proc/}"
        pid_is "$pid" "$(cat "$p/comm" 2>/dev/null)" && out="$out${out:+ }$pid"
    done
    echo "$out"
}

# Send SIG to PID and wait up to 120 s for it to exit.
stop_pid() {
    local pid=$1 sig=$2 what=$3 _
    kill "-$sig" "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 240); do
        kill -0 "$pid" 2>/dev/null || {
            say "$what stopped"
            return 0
        }
        sleep 0.5
    done
    die "$what (pid $pid) did not stop within 120 s"
}

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

# State: ports chosen so far and the generated password. Plain KEY=value lines.
load_state() {
    MARIADB_PORT="" POSTGRES_PORT="" LEGACY_PORT="" DB_PASSWORD=""
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

save_state() {
    mkdir -p "$CACHE"
    (
        umask 077
        {
            echo "# scripts/databases.sh state; keep private (0600)"
            echo "MARIADB_PORT=$MARIADB_PORT"
            echo "POSTGRES_PORT=$POSTGRES_PORT"
            echo "LEGACY_PORT=$LEGACY_PORT"
            echo "DB_PASSWORD=$DB_PASSWORD"
        } >"$STATE_FILE.tmp"
        mv "$STATE_FILE.tmp" "$STATE_FILE"
    )
    chmod 600 "$STATE_FILE"
}

url_mariadb() { echo "mysql://$DB_USER:$1@127.0.0.1:$2/$DB_NAME"; }
url_postgres() { echo "postgres://$DB_USER:$1@127.0.0.1:$2/$DB_NAME"; }

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

# Host paths of the main servers' Unix sockets; empty when a path is too long for a socket
# address (107 bytes), in which case only the TCP URLs are offered.
socket_paths() {
    [ -n "${MARIADB_MODE:-}" ] || detect_modes
    mariadb_instance main
    postgres_instance
    MARIADB_SOCKET="$(host_path "$M_MODE" "$M_SOCK")"
    POSTGRES_SOCKET_DIR="$P_HDIR"
    [ ${#MARIADB_SOCKET} -le 107 ] || MARIADB_SOCKET=""
    [ $((${#POSTGRES_SOCKET_DIR} + 18)) -le 107 ] || POSTGRES_SOCKET_DIR=""
}

# Same servers over their Unix sockets: lower latency for a client on the same machine.
url_mariadb_socket() { echo "mysql://$DB_USER:$1@localhost/$DB_NAME?socket=$(url_encode "$MARIADB_SOCKET")"; }
url_postgres_socket() { echo "postgres://$DB_USER:$1@$(url_encode "$POSTGRES_SOCKET_DIR"):$2/$DB_NAME"; }

# The URL lines of servers.env (password $1), one per started server.
env_lines() {
    socket_paths
    [ -n "$MARIADB_PORT" ] && echo "ANNBENCH_MARIADB_URL=$(url_mariadb "$1" "$MARIADB_PORT")"
    [ -n "$POSTGRES_PORT" ] && echo "ANNBENCH_POSTGRES_URL=$(url_postgres "$1" "$POSTGRES_PORT")"
    [ -n "$MARIADB_PORT" ] && [ -n "$MARIADB_SOCKET" ] &&
        echo "ANNBENCH_MARIADB_SOCKET_URL=$(url_mariadb_socket "$1")"
    [ -n "$POSTGRES_PORT" ] && [ -n "$POSTGRES_SOCKET_DIR" ] &&
        echo "ANNBENCH_POSTGRES_SOCKET_URL=$(url_postgres_socket "$1" "$POSTGRES_PORT")"
    [ -n "$LEGACY_PORT" ] && echo "ANNBENCH_TEST_OLD_MARIADB_URL=$(url_mariadb "$1" "$LEGACY_PORT")"
    true
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
    if [ -z "$MARIADB_PORT$POSTGRES_PORT$LEGACY_PORT" ]; then
        say "no servers started yet from $CACHE: run scripts/databases.sh up"
        return 0
    fi
    env_lines '***' | while IFS= read -r line; do say "$line"; done
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

# Redis 8 with its vector sets (VADD, VSIM: built into redis-server since 8.0, no module to load).
# An engine of scripts/databases.sh (the hooks: lib/databases-common.sh).
# shellcheck shell=bash
# shellcheck disable=SC2034  # REDIS_MODE, REDIS_SERVER are read by the other sourced files

# --- Engine hooks ---
# Debian 13's redis-server is 8.0.x (its redis-tools holds the binary and redis-cli).
redis_packages() { echo redis-server; }
redis_state() { echo REDIS_PORT; }

redis_detect() {
    local b v
    REDIS_MODE=root REDIS_SERVER=/usr/bin/redis-server
    [ "$1" = root ] && return 0
    if b="$(host_redis_server)"; then
        v="$(redis_version_of host "$b")"
        if [ -n "$v" ] && version_ge "$v" 8.0 && grep -qa VSIM "$b"; then
            REDIS_MODE=host REDIS_SERVER="$b"
            return 0
        fi
    fi
    if [ "$1" = host ]; then
        die "ANNBENCH_SERVERS_FROM=host but the host has no redis-server >= 8.0 with vector sets (found: ${v:-none})"
    fi
}

redis_up() {
    redis_instance
    redis_srv_up
    REDIS_PORT=$R_PORT
}
redis_down() {
    redis_instance
    redis_srv_down
}
redis_status() {
    redis_instance
    redis_srv_status
}

# Servers by kind (main, extra: the instance in INST_*; see databases-instances.sh).
redis_srv_select() {
    case "$1" in
    main) redis_instance ;;
    extra) redis_extra_instance ;;
    esac
}
redis_srv_url() { echo "redis://:$1@127.0.0.1:$2"; }
redis_srv_port() { sed -n 's/^port //p' "$R_HCONF" 2>/dev/null; }
redis_srv_pid() { redis_pid; }
redis_srv_datadir() { echo "$R_HDIR"; }
redis_instance_port_base() { echo 16390; }
redis_managed_ports() { [ -z "${REDIS_PORT:-}" ] || echo "$REDIS_PORT redis"; }
# Settings of an instance that would take the server out of databases.sh's hands.
redis_managed_settings() { echo port bind requirepass daemonize supervised pidfile logfile dir include unixsocket; }

redis_srv_up() {
    local pid port
    if pid="$(redis_pid)"; then
        # Remembered by another checkout's state file, or by none (an older databases.sh rewrote
        # state.env): its config names the port.
        [ -n "$R_PORT" ] || R_PORT="$(redis_srv_port)"
        say "$R_NAME already running (pid $pid, 127.0.0.1:$R_PORT)"
        redis_ping "$R_PORT" ||
            die "$R_NAME (pid $pid) does not accept the password of $STATE_FILE (changed ANNBENCH_DB_PASSWORD?): stop it (databases.sh down, or down-instance $R_ID) and start it again"
        return 0
    fi
    port="$(pick_port "$R_PORT_WANTED")"
    R_PORT=$port
    mkdir -p "$R_HDIR"
    redis_write_conf "$port"
    if is_root || [ "$R_MODE" = root ]; then
        in_env "$R_MODE" chown -R "$R_USER:$R_USER" "$R_DIR"
    fi
    chmod 700 "$R_HDIR"
    redis_srv_start
}

# Start the server on its config and wait until it answers PING with the password.
# daemonize: redis-server forks into its own session and returns; it only fails here on a
# bad config (an unknown or bad setting: Redis's own message is in the log shown). No
# inherited stdio or lock fd (9): nothing holds the caller's pipes.
redis_srv_start() {
    local log="$LOG_DIR/$R_TAG-start.log" port
    port="$(redis_srv_port)"
    : >>"$log"
    in_env_as "$R_MODE" "$R_USER" "$REDIS_SERVER" "$R_CONF" </dev/null >>"$log" 2>&1 9>&- ||
        fail_log "$R_NAME: redis-server did not start" "$log"
    local _ gone=0
    for _ in $(seq 1 120); do
        # An unknown directive aborts the daemon after it forked (Redis 8 takes it for a module's).
        if ! redis_pid >/dev/null; then gone=$((gone + 1)); fi
        [ "$gone" -lt 6 ] || fail_log "$R_NAME exited at start" "$R_HDIR/redis.log"
        if redis_ping "$port"; then
            redis_has_vector_sets "$port" ||
                die "Redis on 127.0.0.1:$port has no vector sets (VADD/VSIM); it needs Redis 8 (see $R_HDIR/redis.log)"
            say "$R_NAME $(redis_version) started on 127.0.0.1:$port"
            return 0
        fi
        sleep 0.5
    done
    fail_log "$R_NAME did not answer PING within 60 s" "$R_HDIR/redis.log"
}

redis_srv_down() {
    local pid
    # SIGTERM: Redis shuts down (shutdown-on-sigterm nosave: no snapshot, persistence is off).
    if pid="$(redis_pid)"; then stop_pid "$pid" TERM "$R_NAME (pid $pid)"; fi
}
redis_srv_stop() { redis_srv_down; }

redis_srv_status() {
    local pid
    if pid="$(redis_pid)"; then
        [ -n "$R_PORT" ] || R_PORT="$(redis_srv_port)"
        say "$R_NAME $(redis_version): running, pid $pid, 127.0.0.1:$R_PORT ($R_MODE binaries, data $R_HDIR)${INST_NOTE:-}"
    else
        say "$R_NAME: stopped${R_PORT:+ (port $R_PORT remembered)}${INST_NOTE:-}"
    fi
}

# The default user's password (requirepass) and no user name: clients send `AUTH password`,
# which every Redis understands; redis://default:PASSWORD@... is the same login.
redis_env_lines() {
    [ -n "$REDIS_PORT" ] || return 0
    echo "ANNBENCH_REDIS_URL=redis://:$1@127.0.0.1:$REDIS_PORT"
}

# --- The server ---

# The main server: R_NAME, R_ID, R_TAG (log names), R_MODE, R_DIR (data dir inside the env:
# config, pid file, log), R_HDIR (its host path), R_CONF, R_USER, R_PORT (remembered),
# R_PORT_WANTED (the port to start on), R_SETTINGS (an instance's own settings).
redis_instance() {
    [ -n "${REDIS_MODE:-}" ] || detect_modes
    R_NAME=Redis R_ID=redis R_TAG=redis R_MODE=$REDIS_MODE R_SETTINGS=()
    R_PORT=${REDIS_PORT:-} R_PORT_WANTED="${ANNBENCH_REDIS_PORT:-${REDIS_PORT:-16379}}"
    redis_paths "$(data_base "$REDIS_MODE")/redis"
}

# The extra instance in INST_*: the main server's binary, data dir of its own.
redis_extra_instance() {
    [ -n "${REDIS_MODE:-}" ] || detect_modes
    R_NAME="Redis instance $INST_NAME" R_ID="redis:$INST_NAME" R_TAG="redis-$INST_NAME" R_MODE=$REDIS_MODE
    R_SETTINGS=("${INST_SETTINGS[@]}") R_PORT=$INST_PORT R_PORT_WANTED=$INST_PORT
    redis_paths "$(data_base "$REDIS_MODE")/instances/redis-$INST_NAME"
}

redis_paths() {
    R_DIR=$1
    R_HDIR="$(host_path "$R_MODE" "$R_DIR")"
    R_CONF="$R_DIR/redis.conf"
    R_HCONF="$R_HDIR/redis.conf"
    R_PIDFILE="$R_DIR/redis-server.pid"
    # As root the server runs as the package's redis user; as a normal user, as that user.
    R_USER=redis
    if ! is_root; then
        R_USER="$(id -un)"
    elif [ "$R_MODE" = host ] && ! id redis >/dev/null 2>&1; then
        die "the host's redis-server has no redis user to run as: create one (useradd --system redis)"
    fi
}

redis_pid() {
    local f pid
    f="$(host_path "$R_MODE" "$R_PIDFILE")"
    [ -f "$f" ] || return 1
    pid="$(cat "$f" 2>/dev/null)"
    pid_is "$pid" redis-server && echo "$pid"
}

host_redis_server() {
    local b
    for b in "$(command -v redis-server 2>/dev/null || true)" /usr/bin/redis-server /usr/local/bin/redis-server; do
        [ -n "$b" ] && [ -x "$b" ] && {
            echo "$b"
            return 0
        }
    done
    return 1
}

# "8.0.2" from `redis-server --version` ("Redis server v=8.0.2 sha=..."), or nothing.
redis_version_of() {
    in_env "$1" "$2" --version 2>/dev/null | sed -n 's/.*v=\([0-9][0-9.]*\).*/\1/p' | head -n1
}
redis_version() { redis_version_of "$R_MODE" "$REDIS_SERVER"; }

# Persistence is off (no RDB snapshots, no AOF): a benchmark server whose data annbench loads
# again from the data set, where a snapshot would fork (copy-on-write doubles the memory of a
# big vector set) and write gigabytes in the middle of a measurement. `dir` still points into
# the data dir, so nothing lands elsewhere. maxmemory is RAM/2 with noeviction: a load that
# outgrows it fails with Redis's OOM error instead of evicting vectors or taking the machine down.
redis_write_conf() {
    local port=$1 mm f kv
    mm="${ANNBENCH_REDIS_MAXMEMORY:-$(ram_mb_over 2)mb}"
    f="$R_HCONF"
    (
        umask 077
        {
            echo "# Written by scripts/databases.sh on every start; use the ANNBENCH_* overrides instead."
            echo "bind 127.0.0.1"
            echo "port $port"
            echo "protected-mode yes"
            echo "requirepass $DB_PASSWORD"
            echo "daemonize yes"
            echo "supervised no"
            echo "pidfile $R_PIDFILE"
            echo "logfile $R_DIR/redis.log"
            echo "dir $R_DIR"
            echo "save \"\""
            echo "appendonly no"
            echo "shutdown-on-sigterm nosave"
            echo "maxmemory $mm"
            echo "maxmemory-policy noeviction"
            echo "maxclients ${ANNBENCH_REDIS_MAXCLIENTS:-10000}"
            # The instance's own settings (up-instance); the last value of a directive wins.
            for kv in "${R_SETTINGS[@]}"; do echo "${kv%%=*} ${kv#*=}"; done
        } >"$f.tmp"
        mv "$f.tmp" "$f"
    )
    [ "$R_ID" = redis ] || return 0
    say "Redis memory (RAM $(ram_mb) MiB): maxmemory=$mm (RAM/2, noeviction); override with ANNBENCH_REDIS_MAXMEMORY (0: no limit)"
}

# Write one RESP command (the words given) to stdout (not through $(...): it strips the last \n).
redis_resp() {
    local w
    printf '*%d\r\n' $#
    for w in "$@"; do printf '$%d\r\n%s\r\n' "${#w}" "$w"; done
}

# Send AUTH with the password, then one command, to Redis on 127.0.0.1:PORT over bash's
# /dev/tcp (the password is never in a command line); print the command's first reply line.
# Fails when nothing listens or AUTH is refused.
redis_call() {
    local port=$1
    shift
    (
        LC_ALL=C
        exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
        {
            redis_resp AUTH "$DB_PASSWORD"
            redis_resp "$@"
        } >&3
        local line
        IFS= read -r -t 5 line <&3 || exit 1
        [ "${line%$'\r'}" = "+OK" ] || exit 1
        IFS= read -r -t 5 line <&3 || exit 1
        printf '%s\n' "${line%$'\r'}"
    ) 2>/dev/null 9>&-
}

redis_ping() { [ "$(redis_call "$1" PING)" = "+PONG" ]; }

# VCARD of a key that does not exist is 0 where vector sets exist, an unknown command elsewhere.
redis_has_vector_sets() { [ "$(redis_call "$1" VCARD annbench:probe:none)" = ":0" ]; }

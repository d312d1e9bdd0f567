# MariaDB: the main server (>= 11.7, MHNSW), the legacy one (the host's 10.11, a real too-old
# server for tests) and extra instances (up-instance). An engine of scripts/databases.sh (the
# hooks: lib/databases-common.sh).
# shellcheck shell=bash
# shellcheck disable=SC2034  # MARIADB_MODE, MARIADBD are read by the other sourced files

# --- Engine hooks ---
mariadb_packages() { echo mariadb-server; }
mariadb_state() { echo MARIADB_PORT LEGACY_PORT; }

mariadb_detect() {
    local v
    MARIADB_MODE=root MARIADBD=/usr/sbin/mariadbd
    [ "$1" = root ] && return 0
    v="$(host_mariadb_version)"
    if [ -n "$v" ] && version_ge "$v" 11.7; then
        MARIADB_MODE=host MARIADBD="$(host_mariadbd)"
    elif [ "$1" = host ]; then
        die "ANNBENCH_SERVERS_FROM=host but the host has no MariaDB >= 11.7 (found: ${v:-none})"
    fi
}

mariadb_up() { mariadb_instance_up main; }
mariadb_down() {
    mariadb_instance_down main
    mariadb_instance_down legacy
}
mariadb_status() { mariadb_instance_status main; }
mariadb_status_extra() {
    if [ -n "${LEGACY_PORT:-}" ]; then mariadb_instance_status legacy; fi
}

# Servers by kind (main, legacy, extra: the instance in INST_*; see databases-instances.sh).
mariadb_srv_select() { mariadb_instance "$1"; }
mariadb_srv_up() { mariadb_instance_up "$M_KIND"; }
mariadb_srv_down() { mariadb_instance_down "$M_KIND"; }
mariadb_srv_status() { mariadb_instance_status "$M_KIND"; }
mariadb_srv_pid() { mariadb_pid; }
mariadb_srv_port() { sed -n 's/^port=//p' "$(host_path "$M_MODE" "$M_CNF")" 2>/dev/null; }
mariadb_srv_stop() { mariadb_instance_down "$M_KIND"; }
mariadb_srv_start() { mariadb_start "$(mariadb_srv_port)"; }
mariadb_srv_url() { url_mariadb "$1" "$2"; }
mariadb_srv_datadir() { host_path "$M_MODE" "$M_DIR"; }
mariadb_srv_kinds() { echo legacy; }
mariadb_instance_port_base() { echo 13320; }
mariadb_managed_ports() {
    [ -z "${MARIADB_PORT:-}" ] || echo "$MARIADB_PORT mariadb"
    [ -z "${LEGACY_PORT:-}" ] || echo "$LEGACY_PORT mariadb:legacy"
}
# --memory (lib/databases-memory.sh): the buffer pool and the MHNSW graph cache at the size,
# InnoDB's data files read with O_DIRECT (past the OS cache); in a cgroup, both at a quarter
# and the OS cache (inside the limit) for the rest.
mariadb_memory_settings() {
    local kib=$1 via=$2 pool
    if [ "$via" = cgroup ]; then kib=$((kib / 4)); fi
    pool=$(((kib + 1023) / 1024)) # MiB: the pool grows in 1 MiB blocks
    [ "$pool" -ge 6 ] || pool=6
    echo "innodb_buffer_pool_size=${pool}M"
    echo "mhnsw_max_cache_size=$((kib > 1024 ? kib * 1024 : 1048576))"
    [ "$via" = cgroup ] && echo "innodb_flush_method=fsync" || echo "innodb_flush_method=O_DIRECT"
}
# The smallest buffer pool: 6 MiB with 16 KiB pages (MariaDB 11.8 refuses to start InnoDB
# below it, although the variable's floor is 2 MiB); mhnsw_max_cache_size: 1 MiB.
mariadb_memory_min_kib() { echo 6144; }
mariadb_srv_rewrite_conf() {
    mariadb_write_cnf "$(mariadb_srv_port)"
    if [ ${#M_SETTINGS[@]} -gt 0 ]; then mariadb_check_cnf; fi
}

# Settings of an instance that would take the server out of databases.sh's hands.
mariadb_managed_settings() { echo datadir socket pid_file log_error port bind_address user basedir skip_networking; }

mariadb_env_lines() {
    [ -n "$MARIADB_PORT" ] && echo "ANNBENCH_MARIADB_URL=$(url_mariadb "$1" "$MARIADB_PORT")"
    if [ -n "$MARIADB_PORT" ]; then
        [ -n "${MARIADB_MODE:-}" ] || detect_modes
        mariadb_instance main
        local sock
        sock="$(host_path "$M_MODE" "$M_SOCK")"
        # A path too long for a socket address (107 bytes) gets no socket URL.
        [ ${#sock} -gt 107 ] || echo "ANNBENCH_MARIADB_SOCKET_URL=mysql://$DB_USER:$1@localhost/$DB_NAME?socket=$(url_encode "$sock")"
    fi
    [ -n "$LEGACY_PORT" ] && echo "ANNBENCH_TEST_OLD_MARIADB_URL=$(url_mariadb "$1" "$LEGACY_PORT")"
    true
}

# `databases.sh up-legacy`: also start the host's MariaDB 10.11 (a real too-old server).
mariadb_cmd_up_legacy() {
    take_lock
    load_state
    ensure_legacy_binaries
    mariadb_instance_up legacy
    save_state
    write_env_file
    print_urls
}

url_mariadb() { echo "mysql://$DB_USER:$1@127.0.0.1:$2/$DB_NAME"; }

host_mariadbd() {
    local b
    for b in "$(command -v mariadbd 2>/dev/null || true)" /usr/sbin/mariadbd /usr/local/mysql/bin/mariadbd; do
        [ -n "$b" ] && [ -x "$b" ] && {
            echo "$b"
            return 0
        }
    done
    return 1
}

# "11.8.9" from `mariadbd --version`, or nothing.
host_mariadb_version() {
    local b
    b="$(host_mariadbd)" || return 0
    "$b" --version 2>/dev/null | sed -n 's/.*Ver \([0-9][0-9.]*\)-MariaDB.*/\1/p' | head -n1
}

# --- The servers ---

# Set M_MODE, M_BIN, M_DIR (data dir inside the env), M_PORT_VAR, M_DEFAULT_PORT, M_PORT_ENV
# (the variable that picks the port at start, beating the remembered one), M_NAME, M_KIND.
mariadb_instance() {
    M_KIND=$1 M_TAG=$1 M_SETTINGS=()
    case "$1" in
    main)
        M_MODE=$MARIADB_MODE M_BIN=$MARIADBD M_DIR="$(data_base "$MARIADB_MODE")/mariadb"
        M_PORT_VAR=MARIADB_PORT M_DEFAULT_PORT=13306 M_PORT_ENV=ANNBENCH_MARIADB_PORT M_NAME="MariaDB"
        ;;
    legacy)
        M_MODE=host M_BIN=/usr/sbin/mariadbd M_DIR="$(data_base host)/mariadb-legacy"
        M_PORT_VAR=LEGACY_PORT M_DEFAULT_PORT=13310 M_PORT_ENV=ANNBENCH_LEGACY_MARIADB_PORT M_NAME="legacy MariaDB"
        ;;
    extra)
        [ -n "${MARIADB_MODE:-}" ] || detect_modes
        M_MODE=$MARIADB_MODE M_BIN=$MARIADBD M_DIR="$(data_base "$MARIADB_MODE")/instances/mariadb-$INST_NAME"
        M_PORT_VAR=INST_PORT M_DEFAULT_PORT=13320 M_PORT_ENV=INST_PORT_FORCED M_NAME="MariaDB instance $INST_NAME"
        M_SETTINGS=("${INST_SETTINGS[@]}" "${INST_MEM_SETTINGS[@]}") M_TAG=$INST_NAME
        ;;
    esac
    M_SOCK="$M_DIR/mariadbd.sock"
    M_PIDFILE="$M_DIR/mariadbd.pid"
    M_CNF="$M_DIR.cnf"
}

mariadb_pid() {
    local f
    f="$(host_path "$M_MODE" "$M_PIDFILE")"
    [ -f "$f" ] || return 1
    local pid
    pid="$(cat "$f" 2>/dev/null)"
    pid_is "$pid" mariadbd && echo "$pid"
}

mariadb_write_cnf() {
    local port=$1 pool cache
    pool="${ANNBENCH_INNODB_BUFFER_POOL_SIZE:-$(ram_mb_over 8)M}"
    cache="${ANNBENCH_MHNSW_MAX_CACHE_SIZE:-$(ram_mb_over 4)M}"
    {
        echo "# Written by scripts/databases.sh on every up; edit the ANNBENCH_* overrides instead."
        echo "[mariadbd]"
        echo "datadir=$M_DIR"
        echo "socket=$M_SOCK"
        echo "pid-file=$M_PIDFILE"
        echo "log-error=$M_DIR/error.log"
        echo "port=$port"
        echo "bind-address=127.0.0.1"
        echo "skip-name-resolve"
        echo "local_infile=ON"
        echo "max_connections=${ANNBENCH_MAX_CONNECTIONS:-300}"
        echo "innodb_buffer_pool_size=$pool"
        echo "innodb_log_file_size=${ANNBENCH_INNODB_LOG_FILE_SIZE:-1G}"
        echo "innodb_log_buffer_size=${ANNBENCH_INNODB_LOG_BUFFER_SIZE:-16M}"
        if [ "$M_KIND" != legacy ]; then
            # The 16 MiB default makes big graphs thrash (the cache is reset when full).
            echo "mhnsw_max_cache_size=$cache"
            # Statement digests: annbench's server execution time per query (off by default).
            echo "performance_schema=ON"
        fi
        # An instance's own settings come last: the last value of an option wins.
        local kv
        for kv in "${M_SETTINGS[@]}"; do echo "$kv"; done
        echo "[client]"
        echo "socket=$M_SOCK"
    } >"$(host_path "$M_MODE" "$M_CNF")"
    if [ "$M_KIND" = main ]; then
        say "$M_NAME memory (RAM $(ram_mb) MiB): mhnsw_max_cache_size=$cache (RAM/4), innodb_buffer_pool_size=$pool (RAM/8); override with ANNBENCH_MHNSW_MAX_CACHE_SIZE, ANNBENCH_INNODB_BUFFER_POOL_SIZE"
    fi
}

mariadb_instance_up() {
    mariadb_instance "$1"
    local pid port hdir
    hdir="$(host_path "$M_MODE" "$M_DIR")"
    port="${!M_PORT_VAR}"
    if pid="$(mariadb_pid)"; then
        # Started from another cache dir (the legacy server is shared): take its port from its cnf.
        [ -n "$port" ] || port="$(sed -n 's/^port=//p' "$(host_path "$M_MODE" "$M_CNF")" 2>/dev/null)"
        printf -v "$M_PORT_VAR" '%s' "$port"
        say "$M_NAME already running (pid $pid, 127.0.0.1:$port)"
        mariadb_provision
        return 0
    fi
    port="$(pick_port "${!M_PORT_ENV:-${port:-$M_DEFAULT_PORT}}")"
    printf -v "$M_PORT_VAR" '%s' "$port"
    mkdir -p "$(dirname "$hdir")"
    mariadb_write_cnf "$port"
    if [ ${#M_SETTINGS[@]} -gt 0 ]; then mariadb_check_cnf; fi
    if [ ! -d "$hdir/mysql" ]; then
        say "initialising $M_NAME data dir $hdir"
        mkdir -p "$hdir"
        # As root the server runs as mysql; as a normal user (host binaries only), as that user.
        local as_user=()
        if is_root; then
            in_env "$M_MODE" chown -R mysql:mysql "$M_DIR"
            as_user=(--user=mysql)
        fi
        in_env "$M_MODE" mariadb-install-db --defaults-file="$M_CNF" "${as_user[@]}" \
            --auth-root-authentication-method=socket --skip-test-db \
            >>"$LOG_DIR/mariadb-$M_TAG-init.log" 2>&1 9>&- ||
            fail_log "mariadb-install-db failed" "$LOG_DIR/mariadb-$M_TAG-init.log"
    fi
    mariadb_start "$port"
    mariadb_provision
}

# The server's own verdict on the config file, before it is used: `--help --verbose` parses
# every option and touches no data. It fails on an unknown option and prints [ERROR] (exiting
# 0) on a bad value.
mariadb_check_cnf() {
    local err rc=0
    err="$(in_env "$M_MODE" "$M_BIN" --defaults-file="$M_CNF" --help --verbose 2>&1 >/dev/null 9>&-)" || rc=$?
    if [ "$rc" != 0 ] || printf '%s\n' "$err" | grep -q '\[ERROR\]'; then
        printf '%s\n' "$err" | grep -v 'max_open_files' >&2
        die "$M_NAME: MariaDB refuses the settings in $(host_path "$M_MODE" "$M_CNF") (${M_SETTINGS[*]})"
    fi
}

# Start the server on its config file and wait until it answers (a server that exits, e.g. on
# a bad setting, fails at once with its log).
mariadb_start() {
    local port=$1 hdir pid _ gone=0
    hdir="$(host_path "$M_MODE" "$M_DIR")"
    mariadb_spawn
    pid=$!
    for _ in $(seq 1 120); do
        if in_env "$M_MODE" mariadb-admin --defaults-file="$M_CNF" --socket="$M_SOCK" ping >/dev/null 2>&1 9>&-; then
            say "$M_NAME $(mariadb_version) started on 127.0.0.1:$port"
            return 0
        fi
        # Gone for 2 s with no server in the pid file: it refused to start.
        if ! pid_alive "$pid" && ! mariadb_pid >/dev/null; then gone=$((gone + 1)); fi
        [ "$gone" -lt 4 ] || fail_log "$M_NAME exited at start" "$hdir/error.log"
        sleep 0.5
    done
    fail_log "$M_NAME did not start within 60 s" "$hdir/error.log"
}

# setsid + no inherited stdio: the server outlives this script and holds no caller pipe.
mariadb_spawn() {
    if [ "$M_MODE" = root ]; then
        setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 chroot "$ROOT" \
            "$M_BIN" --defaults-file="$M_CNF" --user=mysql </dev/null >/dev/null 2>&1 9>&- &
    else
        local as_user=()
        if is_root; then as_user=(--user=mysql); fi
        setsid "$M_BIN" --defaults-file="$M_CNF" "${as_user[@]}" </dev/null >/dev/null 2>&1 9>&- &
    fi
}

mariadb_version() {
    in_env "$M_MODE" "$M_BIN" --version 2>/dev/null | sed -n 's/.*Ver \([0-9][0-9.]*\)-MariaDB.*/\1/p'
}

# Database, user and grants; idempotent. SQL goes through stdin so the password is never in
# a command line. The user gets every privilege: this is a private scratch server, and the
# tests create restricted users through it.
mariadb_provision() {
    local admin=root # unix_socket login: install-db maps the OS user that ran it
    is_root || admin="$(id -un)"
    # Not CREATE DATABASE IF NOT EXISTS: it waits for the schema's metadata lock, which a
    # running ALTER TABLE ... ADD VECTOR INDEX (a sweep's build) holds for its whole length.
    in_env "$M_MODE" mariadb --defaults-file="$M_CNF" --socket="$M_SOCK" -u "$admin" 9>&- <<SQL ||
SET @exists := (SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '$DB_NAME');
EXECUTE IMMEDIATE IF(@exists > 0, 'DO 0', 'CREATE DATABASE \`$DB_NAME\`');
CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PASSWORD';
ALTER USER '$DB_USER'@'%' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'%' WITH GRANT OPTION;
SQL
        die "could not create database/user on $M_NAME (see $(host_path "$M_MODE" "$M_DIR")/error.log)"
}

mariadb_instance_down() {
    load_mode_for "$1" || return 0
    local pid
    if pid="$(mariadb_pid)"; then
        stop_pid "$pid" TERM "$M_NAME (pid $pid)"
    fi
}

# The instance's mode for down/status without building anything.
load_mode_for() {
    [ -n "${MARIADB_MODE:-}" ] || detect_modes
    mariadb_instance "$1"
    [ "$1" != legacy ] || [ -n "$LEGACY_PORT" ]
}


mariadb_instance_status() {
    load_mode_for "$1" || return 0
    local pid port="${!M_PORT_VAR}"
    if pid="$(mariadb_pid)"; then
        say "$M_NAME $(mariadb_version): running, pid $pid, 127.0.0.1:$port ($M_MODE binaries, data $(host_path "$M_MODE" "$M_DIR"))${INST_NOTE:-}"
    else
        say "$M_NAME: stopped${port:+ (port $port remembered)}${INST_NOTE:-}"
    fi
}

ensure_legacy_binaries() {
    if [ -x /usr/sbin/mariadbd ]; then
        local v
        v="$(/usr/sbin/mariadbd --version 2>/dev/null | sed -n 's/.*Ver \([0-9][0-9.]*\)-MariaDB.*/\1/p')"
        if [ -n "$v" ] && version_ge "$v" 11.7; then
            die "the host's MariaDB is $v, not a too-old one; up-legacy needs a host MariaDB < 11.7 (e.g. Debian 12's 10.11)"
        fi
        return 0
    fi
    is_root || die "installing the host's mariadb-server needs root: run with sudo"
    command -v apt-get >/dev/null || die "up-legacy needs apt-get (a Debian/Ubuntu host)"
    say "installing the host's mariadb-server (a too-old MariaDB for tests; not started as a service)"
    local created=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        created=1
    fi
    local log="$LOG_DIR/legacy-install.log" rc=0
    # A fresh machine may have no package lists yet: update once if the first try fails.
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mariadb-server >>"$log" 2>&1 9>&- ||
        { apt-get update >>"$log" 2>&1 9>&- &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mariadb-server >>"$log" 2>&1 9>&-; } ||
        rc=$?
    [ -z "$created" ] || rm -f /usr/sbin/policy-rc.d
    [ "$rc" = 0 ] || fail_log "apt-get install mariadb-server failed" "$log"
    # Keep it from starting on 3306 at the next boot (disable works without a running systemd).
    if command -v systemctl >/dev/null; then
        if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; then
            systemctl disable --now mariadb >>"$log" 2>&1 || true
        else
            systemctl disable mariadb >>"$log" 2>&1 || true
        fi
    fi
}

# PostgreSQL + pgvector: the main server and extra instances (up-instance, other versions from
# another Debian suite's root). An engine of scripts/databases.sh (the hooks:
# lib/databases-common.sh).
# shellcheck shell=bash
# shellcheck disable=SC2034  # POSTGRES_MODE, PG_BIN are read by the other sourced files

# --- Engine hooks ---
postgres_packages() { echo postgresql-17 postgresql-17-pgvector; }
postgres_state() { echo POSTGRES_PORT; }

postgres_detect() {
    local dir
    POSTGRES_MODE=root PG_BIN=/usr/lib/postgresql/17/bin
    [ "$1" = root ] && return 0
    if dir="$(host_pg_with_pgvector)"; then
        POSTGRES_MODE=host PG_BIN="$dir"
    elif [ "$1" = host ]; then
        die "ANNBENCH_SERVERS_FROM=host but the host has no PostgreSQL with pgvector >= 0.7"
    fi
}

postgres_up() {
    postgres_instance
    postgres_srv_up
    POSTGRES_PORT=$P_PORT
}
postgres_down() {
    postgres_instance
    postgres_srv_down
}
postgres_status() {
    postgres_instance
    postgres_srv_status
}

# Versions an instance can ask for (up-instance NAME postgres@VERSION): "VERSION SUITE
# PACKAGES..." (the root of that Debian suite holds them; see databases-root.sh).
postgres_versions() {
    echo "17 trixie postgresql-17 postgresql-17-pgvector"
    echo "18 sid postgresql-18 postgresql-18-pgvector"
}

# Servers by kind (main, extra: the instance in INST_*; see databases-instances.sh).
postgres_srv_select() {
    case "$1" in
    main) postgres_instance ;;
    extra) postgres_extra_instance ;;
    esac
}
postgres_srv_url() { url_postgres "$1" "$2"; }
postgres_srv_datadir() { echo "$P_HDIR"; }
postgres_instance_port_base() { echo 15440; }
postgres_srv_port() { sed -n 's/^port = //p' "$P_HDIR/annbench.conf" 2>/dev/null; }
postgres_managed_ports() { [ -z "${POSTGRES_PORT:-}" ] || echo "$POSTGRES_PORT postgres"; }
# --memory (lib/databases-memory.sh): shared_buffers at the size, the data files read with
# direct I/O so that the OS cache does not hold the index instead (debug_io_direct: 16+);
# in a cgroup, shared_buffers at a quarter and the OS cache (inside the limit) for the rest.
postgres_memory_settings() {
    local kib=$1 via=$2
    if [ "$via" = cgroup ]; then kib=$((kib / 4)); fi
    kib=$(((kib + 7) / 8 * 8)) # whole 8 kB pages
    [ "$kib" -ge 128 ] || kib=128
    echo "shared_buffers=${kib}kB"
    [ "$via" = cgroup ] || echo "debug_io_direct=data"
}
# shared_buffers' smallest value: 16 pages.
postgres_memory_min_kib() { echo 128; }
postgres_srv_rewrite_conf() {
    postgres_write_conf "$(postgres_srv_port)"
}

# Settings of an instance that would take the server out of databases.sh's hands.
postgres_managed_settings() {
    echo port listen_addresses unix_socket_directories data_directory config_file hba_file ident_file external_pid_file
}

postgres_env_lines() {
    [ -n "$POSTGRES_PORT" ] || return 0
    echo "ANNBENCH_POSTGRES_URL=$(url_postgres "$1" "$POSTGRES_PORT")"
    postgres_instance
    # The socket directory as host; a path too long for a socket address (107 bytes with the
    # file name .s.PGSQL.<port>) gets no socket URL.
    [ $((${#P_HDIR} + 18)) -gt 107 ] ||
        echo "ANNBENCH_POSTGRES_SOCKET_URL=postgres://$DB_USER:$1@$(url_encode "$P_HDIR"):$POSTGRES_PORT/$DB_NAME"
}

url_postgres() { echo "postgres://$DB_USER:$1@127.0.0.1:$2/$DB_NAME"; }

# The bin dir of the newest host PostgreSQL whose pgvector is >= 0.7 (halfvec), if any.
host_pg_with_pgvector() {
    local bin share ctl v
    for bin in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV) \
        "$(dirname "$(command -v pg_config 2>/dev/null || echo /nonexistent/x)")"; do
        if [ ! -x "$bin/postgres" ] || [ ! -x "$bin/initdb" ]; then continue; fi
        share="$("$bin/pg_config" --sharedir 2>/dev/null || true)"
        [ -n "$share" ] || share="/usr/share/postgresql/$(basename "$(dirname "$bin")")"
        ctl="$share/extension/vector.control"
        [ -f "$ctl" ] || continue
        v="$(sed -n "s/^default_version *= *'\([0-9.]*\)'.*/\1/p" "$ctl")"
        if [ -n "$v" ] && version_ge "$v" 0.7; then
            echo "$bin"
            return 0
        fi
    done
    return 1
}

# --- The servers ---

# The main server: P_NAME, P_MODE, P_BIN, P_DIR (data dir inside the env), P_HDIR (its host
# path), P_PORT (remembered), P_PORT_WANTED (the port to start on), P_TAG (log names),
# P_SETTINGS (an instance's own settings).
postgres_instance() {
    [ -n "${POSTGRES_MODE:-}" ] || detect_modes
    P_NAME=PostgreSQL P_MODE=$POSTGRES_MODE P_BIN=$PG_BIN P_TAG=postgres P_SETTINGS=()
    P_DIR="$(data_base "$POSTGRES_MODE")/postgresql"
    P_HDIR="$(host_path "$POSTGRES_MODE" "$P_DIR")"
    P_PORT=${POSTGRES_PORT:-}
    P_PORT_WANTED="${ANNBENCH_POSTGRES_PORT:-${POSTGRES_PORT:-15432}}"
}

# The extra instance in INST_*: the main server's binaries, or with INST_VERSION those of
# that version in the root of its suite (ROOT already points there).
postgres_extra_instance() {
    [ -n "${POSTGRES_MODE:-}" ] || detect_modes
    P_NAME="PostgreSQL instance $INST_NAME" P_TAG="postgres-$INST_NAME"
    P_SETTINGS=("${INST_SETTINGS[@]}" "${INST_MEM_SETTINGS[@]}")
    if [ -n "$INST_VERSION" ]; then
        P_MODE=root P_BIN="/usr/lib/postgresql/$INST_VERSION/bin"
    else
        P_MODE=$POSTGRES_MODE P_BIN=$PG_BIN
    fi
    P_DIR="$(data_base "$P_MODE")/instances/postgres-$INST_NAME"
    P_HDIR="$(host_path "$P_MODE" "$P_DIR")"
    P_PORT=$INST_PORT P_PORT_WANTED=$INST_PORT
}

postgres_pid() {
    local f="$P_HDIR/postmaster.pid" pid
    [ -f "$f" ] || return 1
    pid="$(head -n1 "$f" 2>/dev/null)"
    pid_is "$pid" postgres && echo "$pid"
}
postgres_srv_pid() { postgres_pid; }

# A setting's value for postgresql.conf: single-quoted, quotes doubled.
pg_conf_quote() {
    local q="'"
    printf "'%s'" "${1//$q/$q$q}"
}

postgres_write_conf() {
    local port=$1 shared mwm kv
    if [[ " ${P_SETTINGS[*]} " == *" debug_io_direct="* ]] && [ "$(postgres_major)" -lt 16 ]; then
        die "$P_NAME: --memory reads past the OS cache with debug_io_direct, which PostgreSQL $(postgres_version) lacks (16+): use --via cgroup"
    fi
    shared="${ANNBENCH_SHARED_BUFFERS:-$(ram_mb_over 4)MB}"
    mwm="${ANNBENCH_MAINTENANCE_WORK_MEM:-$(ram_mb_over 3)MB}"
    {
        echo "# Written by scripts/databases.sh on every up; use the ANNBENCH_* overrides instead."
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $port"
        echo "unix_socket_directories = '$P_DIR'"
        echo "max_connections = ${ANNBENCH_MAX_CONNECTIONS:-300}"
        echo "shared_buffers = '$shared'"
        echo "maintenance_work_mem = '$mwm'"
        echo "# Parallel HNSW builds in pgvector 0.6.0-0.8.1 have a memory-safety bug (CVE-2026-3172)."
        echo "max_parallel_maintenance_workers = ${ANNBENCH_MAX_PARALLEL_MAINTENANCE_WORKERS:-0}"
        echo "max_wal_size = '${ANNBENCH_MAX_WAL_SIZE:-4GB}'"
        echo "dynamic_shared_memory_type = posix"
        echo "# Server execution time and buffer reads per query (annbench's server cost)."
        echo "shared_preload_libraries = 'pg_stat_statements'"
        if [ ${#P_SETTINGS[@]} -gt 0 ]; then
            echo "# The instance's own settings (up-instance); the last value of a setting wins."
            for kv in "${P_SETTINGS[@]}"; do echo "${kv%%=*} = $(pg_conf_quote "${kv#*=}")"; done
        fi
    } >"$P_HDIR/annbench.conf"
    grep -q "^include_if_exists 'annbench.conf'" "$P_HDIR/postgresql.conf" ||
        echo "include_if_exists 'annbench.conf'" >>"$P_HDIR/postgresql.conf"
    if [ "$P_NAME" = PostgreSQL ]; then
        say "PostgreSQL memory (RAM $(ram_mb) MiB): maintenance_work_mem=$mwm (RAM/3), shared_buffers=$shared (RAM/4); override with ANNBENCH_MAINTENANCE_WORK_MEM, ANNBENCH_SHARED_BUFFERS"
    fi
}

# "18" from the server's version ("18.1").
postgres_major() { postgres_version | cut -d. -f1; }

# initdb's flag that makes every version's data dir alike: data checksums off unless
# ANNBENCH_PG_DATA_CHECKSUMS=on (PostgreSQL 18 turns them on by default, 17 off; 17's initdb
# has no --no-data-checksums).
postgres_checksums_flag() {
    case "${ANNBENCH_PG_DATA_CHECKSUMS:-off}" in
    on) echo --data-checksums ;;
    off) if [ "$(postgres_major)" -ge 18 ]; then echo --no-data-checksums; fi ;;
    *) die "ANNBENCH_PG_DATA_CHECKSUMS must be on or off (got '$ANNBENCH_PG_DATA_CHECKSUMS')" ;;
    esac
}

postgres_srv_up() {
    local pid port log="$LOG_DIR/$P_TAG-init.log"
    if pid="$(postgres_pid)"; then
        say "$P_NAME already running (pid $pid, 127.0.0.1:$P_PORT)"
        postgres_provision
        return 0
    fi
    [ -x "$(host_path "$P_MODE" "$P_BIN/postgres")" ] || die "$P_NAME: no PostgreSQL server at $(host_path "$P_MODE" "$P_BIN")"
    postgres_clear_stale_lock
    port="$(pick_port "$P_PORT_WANTED")"
    P_PORT=$port
    if [ ! -f "$P_HDIR/PG_VERSION" ]; then
        local checksums
        checksums="$(postgres_checksums_flag)"
        say "initialising $P_NAME data dir $P_HDIR (data checksums ${ANNBENCH_PG_DATA_CHECKSUMS:-off})"
        mkdir -p "$P_HDIR"
        in_env "$P_MODE" chown postgres:postgres "$P_DIR"
        chmod 700 "$P_HDIR"
        # shellcheck disable=SC2086  # $checksums: no flag or one
        in_env_as "$P_MODE" postgres "$P_BIN/initdb" -D "$P_DIR" -U postgres -E UTF8 \
            --locale=C.UTF-8 --auth-local=peer --auth-host=scram-sha-256 $checksums \
            >>"$log" 2>&1 9>&- ||
            fail_log "initdb failed" "$log"
    fi
    postgres_write_conf "$port"
    postgres_srv_start
    postgres_provision
}

# Start the server on its data dir and config, waiting until it accepts connections. pg_ctl
# starts the postmaster in its own session with stdio on server.log; with our stdio closed
# too, nothing holds the caller's terminal or pipes. A bad setting fails here, with the
# server's own message from server.log.
postgres_srv_start() {
    P_PORT="$(postgres_srv_port)"
    in_env_as "$P_MODE" postgres "$P_BIN/pg_ctl" -D "$P_DIR" -l "$P_DIR/server.log" \
        -w -t 90 start </dev/null >>"$LOG_DIR/$P_TAG-start.log" 2>&1 9>&- ||
        fail_log "$P_NAME did not start" "$P_HDIR/server.log"
    say "$P_NAME $(postgres_version) started on 127.0.0.1:$P_PORT"
}

# After a kill -9 the postmaster's lock file stays, naming a dead (or zombie) pid, and
# PostgreSQL refuses to start ("lock file postmaster.pid already exists"). Once the killed
# server's own processes are gone (they exit when they notice), the lock is stale: remove it.
postgres_clear_stale_lock() {
    local f="$P_HDIR/postmaster.pid" old
    [ -f "$f" ] || return 0
    old="$(head -n1 "$f" 2>/dev/null)"
    pid_is "$old" postgres && return 0
    local _ left
    for _ in $(seq 1 60); do
        left="$(procs_in_dir "$P_HDIR")"
        [ -n "$left" ] || break
        sleep 0.5
    done
    [ -z "$left" ] || die "processes of a killed PostgreSQL (pids $left) still use $P_HDIR after 30 s; stop them, then run up again"
    warn "PostgreSQL (pid $old) was killed without shutting down: removing its stale lock files"
    rm -f "$f"
    # The socket's lock file (in the data directory, our unix_socket_directories) names it too.
    local lock
    for lock in "$P_HDIR"/.s.PGSQL.*.lock; do
        [ -f "$lock" ] || continue
        pid_is "$(head -n1 "$lock" 2>/dev/null)" postgres || rm -f "$lock" "${lock%.lock}"
    done
}

postgres_version() {
    in_env "$P_MODE" "$P_BIN/postgres" --version 2>/dev/null | sed -n 's/.*) \([0-9][0-9.]*\).*/\1/p'
}

postgres_psql() {
    in_env_as "$P_MODE" postgres "$P_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$P_DIR" \
        -p "$P_PORT" -U postgres "$@" 9>&-
}

# Role, database and the vector extension (created by the superuser: pgvector is not a trusted
# extension). The role may create databases and roles (tests make restricted ones) but is not
# a superuser. SQL goes through stdin so the password is never in a command line.
postgres_provision() {
    postgres_psql -d postgres <<SQL >/dev/null || die "could not create role/database on $P_NAME (see $P_HDIR/server.log)"
SELECT 'CREATE ROLE $DB_USER LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER')\\gexec
ALTER ROLE $DB_USER WITH LOGIN CREATEDB CREATEROLE PASSWORD '$DB_PASSWORD';
SELECT 'CREATE DATABASE $DB_NAME OWNER $DB_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DB_NAME')\\gexec
SQL
    postgres_psql -d "$DB_NAME" -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS vector" >/dev/null ||
        die "could not create the vector extension (is pgvector installed for $P_BIN?)"
    postgres_psql -d "$DB_NAME" -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null ||
        die "could not create the pg_stat_statements extension (see $P_HDIR/server.log)"
    postgres_allow_socket_password
}

# initdb's local (Unix socket) rule is peer authentication, which only lets an OS user of the
# same name in: let the annbench role in with its password, as over TCP.
postgres_allow_socket_password() {
    local hba="$P_HDIR/pg_hba.conf" rule="local all $DB_USER scram-sha-256"
    grep -qxF "$rule" "$hba" && return 0
    { echo "# annbench: password login over the Unix socket (scripts/databases.sh)"; echo "$rule"; cat "$hba"; } >"$hba.tmp"
    chown --reference="$hba" "$hba.tmp"
    chmod 600 "$hba.tmp"
    mv "$hba.tmp" "$hba"
    postgres_psql -d postgres -c "SELECT pg_reload_conf()" >/dev/null || die "could not reload PostgreSQL's pg_hba.conf"
}

# SIGINT is PostgreSQL's "fast" shutdown: roll back sessions, checkpoint, exit.
postgres_srv_down() {
    local pid
    if pid="$(postgres_pid)"; then stop_pid "$pid" INT "$P_NAME (pid $pid)"; fi
}
postgres_srv_stop() { postgres_srv_down; }

postgres_srv_status() {
    local pid
    if pid="$(postgres_pid)"; then
        say "$P_NAME $(postgres_version): running, pid $pid, 127.0.0.1:$P_PORT ($P_MODE binaries, data $P_HDIR)${INST_NOTE:-}"
    else
        say "$P_NAME: stopped${P_PORT:+ (port $P_PORT remembered)}${INST_NOTE:-}"
    fi
}

# Extra server instances of an engine, beside its main server (sourced by scripts/databases.sh):
#   up-instance NAME ENGINE[@VERSION] [SETTING=VALUE ...]   down-instance ID [--delete]
#   restart-instance ID   (ID: an engine key for its main server, ENGINE:NAME, or a NAME only
#                          one engine has)
# An instance has the main server's user, password, database, provisioning and tuning, its own
# data dir and config, and its own port; the settings given are written into its config after
# the tuning (the last value wins). Each is remembered in instances/ENGINE-NAME.env in the cache
# dir (engine, version, port, settings); servers.env gets its URL as ANNBENCH_<ENGINE>_<NAME>_URL.
#
# An engine has instances when it defines, for the server picked by <db>_srv_select KIND (main,
# extra: the instance in INST_*; <db>_srv_kinds may name more, e.g. MariaDB's legacy):
#   <db>_srv_up (start, or find running, and provision), <db>_srv_start (start its existing
#   config and data, wait until it accepts connections), <db>_srv_stop, <db>_srv_down,
#   <db>_srv_pid, <db>_srv_port (from its config), <db>_srv_status, <db>_srv_datadir,
#   <db>_srv_url PW PORT, <db>_managed_settings (names an instance may not set),
#   <db>_managed_ports ("PORT ID" of its own servers), <db>_instance_port_base,
# and optionally <db>_versions ("VERSION SUITE PACKAGES..." lines: ENGINE@VERSION comes from
# the root of that Debian suite).
# shellcheck shell=bash
# shellcheck disable=SC2034  # INST_* are read by the engine files

INST_DIR="$CACHE/instances"
INST_ENGINE="" INST_NAME="" INST_VERSION="" INST_PORT="" INST_NOTE=""
INST_PORT_FORCED="" # never set: an instance's port is its remembered one or a new free one
INST_SETTINGS=()

is_engine() { case " $ENGINES " in *" $1 "*) return 0 ;; esac; return 1; }

upper() { printf '%s' "$1" | tr '[:lower:]-' '[:upper:]_'; }

# The servers.env variable of instance NAME of ENGINE: ANNBENCH_<ENGINE>_<NAME>_URL.
instance_var() { echo "ANNBENCH_$(upper "$1")_$(upper "$2")_URL"; }

instance_check_engine() {
    is_engine "$1" || die "unknown engine '$1': one of $ENGINES"
    declare -F "$1_srv_select" >/dev/null || die "engine $1 has no extra instances"
}

# Names map one to one to variable names (upper-cased, '-' as '_'), so no '_'; the engine keys
# (their main servers), main, legacy and socket (ANNBENCH_MARIADB_SOCKET_URL) are taken.
instance_check_name() {
    case "$1" in
    "" | *[!a-z0-9-]* | [!a-z]* | *-)
        die "instance name '$1': lower-case letters, digits and '-', starting with a letter (e.g. pg18, small-cache)"
        ;;
    main | legacy | socket) die "instance name '$1' is taken by databases.sh: choose another" ;;
    esac
    [ ${#1} -le 32 ] || die "instance name '$1' is longer than 32 characters"
    if is_engine "$1"; then die "instance name '$1' names the main $1 server: choose another"; fi
}

# SETTING=VALUE for ENGINE: a setting's name, no control characters (it is one config line),
# and none of the settings databases.sh manages itself. Unknown names and bad values are the
# server's to refuse, when the instance starts.
instance_check_setting() {
    local engine=$1 kv=$2 name value m norm
    case "$kv" in
    *=*) ;;
    *) die "setting '$kv': write it as NAME=VALUE (e.g. shared_buffers=16MB)" ;;
    esac
    name=${kv%%=*} value=${kv#*=}
    case "$name" in
    "" | *[!A-Za-z0-9_.-]* | [!A-Za-z]*)
        die "setting '$kv': '$name' is not a setting name (letters, digits, '_', '.', '-')"
        ;;
    esac
    case "$value" in *[[:cntrl:]]*) die "setting '$name': the value has a control character (a newline?)" ;; esac
    norm="$(printf '%s' "$name" | tr '[:upper:]-' '[:lower:]_')"
    for m in $("${engine}_managed_settings"); do
        [ "$norm" != "$m" ] || die "setting '$name' is set by databases.sh for every $engine server (port, paths, listening address): leave it out"
    done
}

# ENGINE's version VERSION: "SUITE PACKAGES..." from <db>_versions.
instance_version_line() {
    local engine=$1 version=$2 line known=""
    if declare -F "${engine}_versions" >/dev/null; then
        while read -r line; do
            [ "${line%% *}" != "$version" ] || {
                echo "${line#* }"
                return 0
            }
            known="$known${known:+, }${line%% *}"
        done < <("${engine}_versions")
    fi
    die "$engine@$version: no such version here (${known:+versions: $known; }without @VERSION: the main server's)"
}

instance_file() { echo "$INST_DIR/$1-$2.env"; }

# Load instance ENGINE NAME into INST_*; fails when it does not exist.
instance_load() {
    local f line
    INST_ENGINE=$1 INST_NAME=$2 INST_VERSION="" INST_PORT="" INST_SETTINGS=()
    INST_MEMORY_KIB="" INST_MEMORY_VIA=""
    f="$(instance_file "$1" "$2")"
    [ -f "$f" ] || return 1
    while IFS= read -r line; do
        case "$line" in
        VERSION=*) INST_VERSION=${line#VERSION=} ;;
        PORT=*) INST_PORT=${line#PORT=} ;;
        SETTING=*) INST_SETTINGS+=("${line#SETTING=}") ;;
        MEMORY=*) INST_MEMORY_KIB=${line#MEMORY=} ;;
        MEMORY_VIA=*) INST_MEMORY_VIA=${line#MEMORY_VIA=} ;;
        esac
    done <"$f"
}

instance_save() {
    local f kv
    f="$(instance_file "$INST_ENGINE" "$INST_NAME")"
    mkdir -p "$INST_DIR"
    {
        echo "# scripts/databases.sh up-instance $INST_NAME $INST_ENGINE${INST_VERSION:+@$INST_VERSION}; one SETTING= line per setting given"
        echo "ENGINE=$INST_ENGINE"
        echo "NAME=$INST_NAME"
        echo "VERSION=$INST_VERSION"
        echo "PORT=$INST_PORT"
        for kv in "${INST_SETTINGS[@]}"; do echo "SETTING=$kv"; done
        if [ -n "$INST_MEMORY_KIB" ]; then
            echo "# --memory (KiB) and how: see scripts/lib/databases-memory.sh"
            echo "MEMORY=$INST_MEMORY_KIB"
            echo "MEMORY_VIA=$INST_MEMORY_VIA"
        fi
    } >"$f.tmp"
    mv "$f.tmp" "$f"
}

# "ENGINE NAME" of every instance (of an engine this checkout has), sorted.
instances_all() {
    local f base e
    for f in "$INST_DIR"/*.env; do
        [ -f "$f" ] || continue
        base="${f##*/}"
        base="${base%.env}"
        e="${base%%-*}"
        if is_engine "$e"; then echo "$e ${base#*-}"; fi
    done | LC_ALL=C sort
}

# Point ROOT at the loaded instance's root (its version's suite, else the main root) and select
# it in its engine.
instance_select() {
    local line
    if [ -n "$INST_VERSION" ]; then
        line="$(instance_version_line "$INST_ENGINE" "$INST_VERSION")"
        use_root "${line%% *}"
    else
        use_root trixie
    fi
    INST_NOTE="; settings: ${INST_SETTINGS[*]:-as the main server}; memory: $(memory_describe)"
    memory_select
    "${INST_ENGINE}_srv_select" extra
}

# A port for a new instance of ENGINE: from the engine's base, the first that no server of the
# cache dir has remembered and nothing listens on.
instance_new_port() {
    local p taken
    p="$("${1}_instance_port_base")"
    taken=" $(managed_ports | cut -d' ' -f1 | tr '\n' ' ') "
    while [[ "$taken" == *" $p "* ]] || port_busy "$p"; do
        p=$((p + 1))
        [ "$p" -lt "$(("$("${1}_instance_port_base")" + 100))" ] || die "no free port for a $1 instance from $("${1}_instance_port_base")"
    done
    echo "$p"
}

# "PORT ID" of every server of the cache dir: the engines' own, then the instances.
managed_ports() {
    local e v e2 n
    for e in $ENGINES; do
        if declare -F "${e}_managed_ports" >/dev/null; then
            "${e}_managed_ports"
        else
            v="$(upper "$e")_PORT"
            [ -z "${!v:-}" ] || echo "${!v} $e"
        fi
    done
    while read -r e2 n; do
        [ -n "$n" ] || continue
        (
            instance_load "$e2" "$n" || exit 0
            [ -z "$INST_PORT" ] || echo "$INST_PORT $e2:$n"
        )
    done < <(instances_all)
}

# servers.env lines (password $1) after the engines': each instance's URL, then this script's
# path and, per port of a server it manages, the ID restart-instance takes (for annbench to
# restart a server it connects to).
instance_env_lines() {
    local e n port id
    while read -r e n; do
        [ -n "$n" ] || continue
        (
            instance_load "$e" "$n" || exit 0
            [ -z "$INST_PORT" ] || echo "$(instance_var "$e" "$n")=$("${e}_srv_url" "$1" "$INST_PORT")"
        )
    done < <(instances_all)
    echo "ANNBENCH_DATABASES_SH=$(cd "$LIB_DIR/.." && pwd)/databases.sh"
    while read -r port id; do
        [ -z "$port" ] || echo "ANNBENCH_MANAGED_$port=$id"
    done < <(managed_ports)
}

# ID -> ID_ENGINE and ID_KIND (main, a kind such as legacy, or extra with INST_* loaded).
instance_resolve() {
    local id=$1 e n found=()
    ID_ENGINE="" ID_KIND=""
    if is_engine "$id"; then
        ID_ENGINE=$id ID_KIND=main
        return 0
    fi
    case "$id" in
    *:*)
        e=${id%%:*} n=${id#*:}
        instance_check_engine "$e"
        if declare -F "${e}_srv_kinds" >/dev/null && [[ " $("${e}_srv_kinds") " == *" $n "* ]]; then
            ID_ENGINE=$e ID_KIND=$n
            return 0
        fi
        instance_load "$e" "$n" || die "no instance '$id' (see scripts/databases.sh status)"
        ID_ENGINE=$e ID_KIND=extra
        return 0
        ;;
    esac
    while read -r e n; do [ "$n" != "$id" ] || found+=("$e:$n"); done < <(instances_all)
    case ${#found[@]} in
    0) die "no instance '$id': give an engine ($ENGINES), ENGINE:NAME or an instance's name (see scripts/databases.sh status)" ;;
    1) instance_resolve "${found[0]}" ;;
    *) die "'$id' names an instance of several engines: say which (${found[*]})" ;;
    esac
}

# Start the loaded instance in its root (in a subshell: ROOT and the engine's globals change).
instance_start_in_root() {
    local line
    if [ -n "$INST_VERSION" ]; then
        line="$(instance_version_line "$INST_ENGINE" "$INST_VERSION")"
        ensure_suite_root "${line%% *}" "${line#* }"
    elif [ "$(engine_mode "$INST_ENGINE")" = root ]; then
        ensure_root
    fi
    instance_select
    memory_enter
    "${INST_ENGINE}_srv_up"
    INST_PORT="$("${INST_ENGINE}_srv_port")"
    instance_save
}

# Start the loaded instance, registered first so that `down` knows a server that started but
# failed later; a new one that did not start is forgotten again, its data dir (never used)
# deleted. (errexit holds in the subshell only outside `if` and `||`, hence set +e around it.)
instance_up() {
    local new=$1 rc
    instance_save
    set +e
    (
        set -e
        instance_start_in_root
    )
    rc=$?
    set -e
    [ "$rc" != 0 ] || return 0
    if [ "$new" = 1 ] && ! (instance_select && "${INST_ENGINE}_srv_pid" >/dev/null); then
        rm -f "$(instance_file "$INST_ENGINE" "$INST_NAME")"
        (
            instance_select
            instance_delete_data
        )
        warn "the new instance $INST_ENGINE:$INST_NAME did not start: forgotten, its data dir deleted (the error is above)"
    fi
    exit "$rc"
}

# `--memory SIZE [--via WAY]` among ARGS -> MEM_SIZE, MEM_VIA; the rest -> MEM_REST.
parse_memory_args() {
    MEM_SIZE="" MEM_VIA="" MEM_REST=()
    while [ $# -gt 0 ]; do
        case "$1" in
        --memory | --via)
            [ $# -ge 2 ] || die "$1 needs a value (--memory 64M, --via settings|cgroup)"
            if [ "$1" = --memory ]; then MEM_SIZE=$2; else MEM_VIA=$2; fi
            shift 2
            ;;
        --memory=*) MEM_SIZE=${1#--memory=} && shift ;;
        --via=*) MEM_VIA=${1#--via=} && shift ;;
        *) MEM_REST+=("$1") && shift ;;
        esac
    done
    [ -z "$MEM_VIA" ] || [ -n "$MEM_SIZE" ] || die "--via $MEM_VIA needs --memory SIZE"
}

cmd_up_instance() {
    [ $# -ge 2 ] || die "usage: databases.sh up-instance NAME ENGINE[@VERSION] [--memory SIZE [--via settings|cgroup]] [SETTING=VALUE ...]"
    local name=$1 spec=$2 engine version="" kv new=1 running mem_kib="" mem_via=""
    shift 2
    engine=${spec%%@*}
    if [[ "$spec" == *@* ]]; then version=${spec#*@}; fi
    instance_check_engine "$engine"
    instance_check_name "$name"
    parse_memory_args "$@"
    set -- ${MEM_REST[@]+"${MEM_REST[@]}"}
    if [ -n "$version" ]; then instance_version_line "$engine" "$version" >/dev/null; fi
    for kv in "$@"; do instance_check_setting "$engine" "$kv"; done
    if [ -n "$MEM_SIZE" ]; then
        INST_ENGINE=$engine INST_NAME=$name
        memory_set "$engine" "$MEM_SIZE" "$MEM_VIA"
        mem_kib=$INST_MEMORY_KIB mem_via=$INST_MEMORY_VIA
    fi
    take_lock
    load_state
    detect_modes
    if instance_load "$engine" "$name"; then
        new=0
        [ "$INST_VERSION" = "$version" ] ||
            die "instance $engine:$name is $engine${INST_VERSION:+@$INST_VERSION}, not $spec (its data dir is of that version): ask for $engine${INST_VERSION:+@$INST_VERSION}, or delete it first (down-instance $engine:$name --delete)"
        running="$(instance_select && "${engine}_srv_pid")" || running=""
        if [ -n "$running" ] && [ "$(printf '%s\n' "${INST_SETTINGS[@]}")" != "$(printf '%s\n' "$@")" ]; then
            die "instance $engine:$name runs with other settings (${INST_SETTINGS[*]:-none}); to change them: scripts/databases.sh down-instance $engine:$name, then up-instance again"
        fi
        # Without --memory it keeps the memory it has (as restart-instance does).
        if [ -z "$MEM_SIZE" ]; then mem_kib=$INST_MEMORY_KIB mem_via=$INST_MEMORY_VIA; fi
        if [ -n "$running" ] && [ "$INST_MEMORY_KIB:$INST_MEMORY_VIA" != "$mem_kib:$mem_via" ]; then
            die "instance $engine:$name runs with other memory ($(memory_describe)); to change it: scripts/databases.sh restart-instance $engine:$name --memory SIZE (or off)"
        fi
    fi
    INST_VERSION=$version
    INST_SETTINGS=("$@")
    INST_MEMORY_KIB=$mem_kib INST_MEMORY_VIA=$mem_via
    [ -n "$INST_PORT" ] || INST_PORT="$(instance_new_port "$engine")"
    instance_up "$new"
    write_env_file
    instance_load "$engine" "$name"
    say "$(instance_var "$engine" "$name")=$("${engine}_srv_url" '***' "$INST_PORT")"
    say "(full URL in $ENV_FILE; restart it with: scripts/databases.sh restart-instance $engine:$name)"
}

cmd_down_instance() {
    case "$#:${2:-}" in
    1: | 2:--delete) ;;
    *) die "usage: databases.sh down-instance ID [--delete]" ;;
    esac
    take_lock
    load_state
    detect_modes
    instance_resolve "$1"
    [ "$ID_KIND" = extra ] || die "'$1' is not an extra instance: the main servers stop with databases.sh down"
    (
        instance_select
        "${INST_ENGINE}_srv_down"
        if [ "${2:-}" = --delete ]; then
            instance_delete_data
            rm -f "$(instance_file "$INST_ENGINE" "$INST_NAME")"
            say "deleted $INST_ENGINE:$INST_NAME"
        fi
    )
    write_env_file
}

# Delete the selected (stopped) instance's data dir and the config beside it (MariaDB's NAME.cnf).
instance_delete_data() {
    local dir
    dir="$("${INST_ENGINE}_srv_datadir")"
    case "$dir" in */instances/"$INST_ENGINE-$INST_NAME") ;; *) die "refusing to delete $dir: not an instance's data dir" ;; esac
    rm -rf "$dir" "$dir.cnf"
}

# Stop one server cleanly and start it again on the same port with the same data and config;
# the other servers are not touched.
# With --memory SIZE (or off) an extra instance restarts with that memory, remembered.
cmd_restart_instance() {
    [ $# -ge 1 ] || die "usage: databases.sh restart-instance ID [--memory SIZE|off [--via settings|cgroup]] (ID: an engine: its main server; ENGINE:NAME; NAME)"
    local target=$1
    shift
    parse_memory_args "$@"
    [ ${#MEM_REST[@]} = 0 ] || die "restart-instance: unknown argument '${MEM_REST[0]}' (usage: restart-instance ID [--memory SIZE|off [--via settings|cgroup]])"
    take_lock
    load_state
    detect_modes
    instance_resolve "$target"
    if [ -n "$MEM_SIZE" ]; then
        memory_set "$ID_ENGINE" "$MEM_SIZE" "$MEM_VIA"
        [ "$ID_KIND" = extra ] || die "--memory: '$target' is a main server, which keeps its memory; make an instance for it (scripts/databases.sh up-instance NAME ${ID_ENGINE} --memory $MEM_SIZE)"
        instance_save
    fi
    (
        local e=$ID_ENGINE port pid id=$target
        declare -F "${e}_srv_start" >/dev/null || die "engine $e cannot restart a server"
        if [ "$ID_KIND" = extra ]; then
            instance_select
            id="$e:$INST_NAME"
        else
            "${e}_srv_select" "$ID_KIND"
        fi
        port="$("${e}_srv_port")"
        [ -n "$port" ] || die "$id has not been started yet: start it with scripts/databases.sh up (or up-instance)"
        if pid="$("${e}_srv_pid")"; then
            "${e}_srv_stop"
        else
            say "$id was not running"
        fi
        ! port_busy "$port" || die "port $port is taken by another program: $id stays stopped"
        # A stopped server's root may have lost its mounts (a reboot).
        if is_root && [ -d "$ROOT/proc" ]; then mount_root; fi
        if [ "$ID_KIND" = extra ]; then
            # A new memory goes into the config (else it is not rewritten: the caller's
            # ANNBENCH_* overrides do not apply); the server starts in its cgroup, if any.
            if [ -n "$MEM_SIZE" ] && declare -F "${e}_srv_rewrite_conf" >/dev/null; then "${e}_srv_rewrite_conf"; fi
            memory_leave
            memory_enter
        fi
        "${e}_srv_start"
        port_busy "$port" || die "$id started but does not accept connections on 127.0.0.1:$port"
    )
}

# Run `FN ENGINE NAME` for every instance, each in a subshell with that instance selected
# (an instance whose state is gone is skipped).
instances_each() {
    local fn=$1 e n
    while read -r e n; do
        [ -n "$n" ] || continue
        (
            instance_load "$e" "$n" || exit 0
            instance_select
            "$fn" "$e" "$n"
        )
    done < <(instances_all)
}

# status lines of every instance.
instances_status() { instances_each instance_print_status; }
instance_print_status() { "${1}_srv_status"; }

# Stop every instance (databases.sh down).
instances_down() { instances_each instance_stop; }
instance_stop() { "${1}_srv_down"; }

# IDs of the running instances.
instances_running() { instances_each instance_print_if_running; }
instance_print_if_running() { if "${1}_srv_pid" >/dev/null; then echo "$1 $2"; fi; }

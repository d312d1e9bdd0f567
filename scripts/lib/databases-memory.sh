# An instance that runs with less memory than its index needs (sourced by scripts/databases.sh):
#   up-instance NAME ENGINE --memory SIZE [--via settings|cgroup] [SETTING=VALUE ...]
#   restart-instance ID --memory SIZE|off [--via settings|cgroup]
# Two ways (docs/memory.md):
#   settings  the server's own caches at SIZE, reading the rest past the OS cache (direct I/O):
#             <db>_memory_settings KIB prints the SETTING=VALUE lines (an engine without it,
#             such as Redis, keeps everything in memory and is refused by name);
#   cgroup    a memory limit of SIZE on the server's processes and the page cache they fill
#             (cgroup v2 memory.max, else v1 memory.limit_in_bytes), the server's caches at a
#             quarter of SIZE and no direct I/O: <db>_memory_settings KIB cgroup.
# The instance file remembers MEMORY=<KiB> and MEMORY_VIA=; restart-instance keeps them unless
# told otherwise, so annbench's `run --memory` sweep restarts the same server at each share.
# shellcheck shell=bash
# shellcheck disable=SC2034  # INST_MEM_SETTINGS is read by the engine files

INST_MEMORY_KIB="" INST_MEMORY_VIA=""
INST_MEM_SETTINGS=()

# "64M", "1G", "512MiB", "300kB", "1048576" -> KiB (whole; bytes round up); dies naming SIZE.
memory_kib() {
    local s=$1 n unit
    n="${s%%[!0-9]*}" unit="${s#"$n"}"
    [ -n "$n" ] || die "--memory '$s': a size such as 64M, 1G or 512MiB"
    n=$((10#$n))
    case "$unit" in
    "" | B | b) echo $(((n + 1023) / 1024)) ;;
    k | K | kB | KB | KiB) echo "$n" ;;
    m | M | MB | MiB) echo $((n * 1024)) ;;
    g | G | GB | GiB) echo $((n * 1024 * 1024)) ;;
    *) die "--memory '$s': unknown unit '$unit' (K, M or G, e.g. 64M)" ;;
    esac
}

# The remembered memory of the loaded instance, for messages: "64M via settings".
memory_describe() {
    [ -n "$INST_MEMORY_KIB" ] || {
        echo "as the main server"
        return 0
    }
    echo "${INST_MEMORY_KIB}K via ${INST_MEMORY_VIA:-settings}"
}

# Check and take `--memory SIZE [--via WAY]` for ENGINE into INST_MEMORY_*; SIZE off forgets it.
memory_set() {
    local engine=$1 size=$2 via=${3:-settings} kib ram
    case "$via" in
    settings | cgroup) ;;
    *) die "--via '$via': settings (the server's caches, direct I/O) or cgroup (a memory limit on its processes)" ;;
    esac
    declare -F "${engine}_memory_settings" >/dev/null ||
        die "--memory: $engine keeps everything in memory (its data and indexes live in RAM), so it cannot run with less memory than its index needs"
    if [ "$size" = off ]; then
        INST_MEMORY_KIB="" INST_MEMORY_VIA=""
        return 0
    fi
    kib="$(memory_kib "$size")"
    ram=$(($(ram_mb) * 1024))
    [ "$kib" -lt "$ram" ] || die "--memory $size is not less than this machine's RAM ($(ram_mb) MiB)"
    [ "$kib" -ge "$("${engine}_memory_min_kib")" ] ||
        die "--memory $size is below $engine's smallest cache ($("${engine}_memory_min_kib") KiB)"
    if [ "$via" = cgroup ]; then memory_cgroup_parent >/dev/null; fi
    INST_MEMORY_KIB=$kib INST_MEMORY_VIA=$via
}

# INST_MEM_SETTINGS of the loaded instance (after its own settings: the last value wins).
memory_select() {
    INST_MEM_SETTINGS=()
    [ -n "$INST_MEMORY_KIB" ] || return 0
    local line
    while read -r line; do
        [ -z "$line" ] || INST_MEM_SETTINGS+=("$line")
    done < <("${INST_ENGINE}_memory_settings" "$INST_MEMORY_KIB" "${INST_MEMORY_VIA:-settings}")
}

# The memory cgroup this script's servers go under: this process's own (v2 with the memory
# controller, else v1's memory hierarchy). Dies when there is none it can use.
memory_cgroup_parent() {
    local rel v2=/sys/fs/cgroup
    [ -f "$v2/cgroup.controllers" ] || v2=/sys/fs/cgroup/unified
    if grep -qw memory "$v2/cgroup.controllers" 2>/dev/null; then
        rel="$(sed -n 's/^0:://p' /proc/self/cgroup)"
        echo "v2 $v2${rel%/}"
        return 0
    fi
    rel="$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)"
    if [ -n "$rel" ] && [ -f "/sys/fs/cgroup/memory${rel%/}/memory.limit_in_bytes" ]; then
        echo "v1 /sys/fs/cgroup/memory${rel%/}"
        return 0
    fi
    die "--via cgroup: this machine has no memory cgroup to use (neither cgroup v2 with the memory controller nor v1's memory hierarchy); use --via settings"
}

# The cgroup directory of the loaded instance: VERSION DIR.
memory_cgroup_dir() {
    local parent
    parent="$(memory_cgroup_parent)" || exit 1
    echo "$parent/annbench-$INST_ENGINE-$INST_NAME"
}

# Put this (sub)shell into the loaded instance's memory-limited cgroup, so that the server it
# starts and every process that server forks are held to INST_MEMORY_KIB together with the
# page cache they fill. Nothing for an instance limited by its settings.
memory_enter() {
    [ "${INST_MEMORY_VIA:-}" = cgroup ] || return 0
    local v dir where bytes=$((INST_MEMORY_KIB * 1024))
    where="$(memory_cgroup_dir)" || exit 1
    v=${where%% *} dir=${where#* }
    if [ ! -d "$dir" ]; then
        mkdir "$dir" 2>/dev/null || die "--via cgroup: cannot create $dir (root is needed to create a cgroup)"
    fi
    if [ "$v" = v2 ]; then
        if ! grep -qw memory "$dir/cgroup.controllers" 2>/dev/null; then
            echo +memory >"${dir%/*}/cgroup.subtree_control" 2>/dev/null ||
                die "--via cgroup: cannot enable the memory controller for ${dir%/*}'s children"
        fi
        echo "$bytes" >"$dir/memory.max"
        echo 0 >"$dir/memory.swap.max" 2>/dev/null || true
    else
        echo "$bytes" >"$dir/memory.limit_in_bytes" ||
            die "--via cgroup: cannot set $dir/memory.limit_in_bytes to $bytes (pages in use above it?)"
    fi
    echo "$BASHPID" >"$dir/cgroup.procs" || die "--via cgroup: cannot move into $dir"
    memory_evict "$("${INST_ENGINE}_srv_datadir")"
    say "memory limit ${INST_MEMORY_KIB}K ($v cgroup $dir) on $INST_ENGINE:$INST_NAME"
}

# Remove the loaded instance's cgroup once nothing runs in it (it stopped, or runs unlimited).
memory_leave() {
    local where dir
    [ -n "$INST_ENGINE" ] || return 0
    where="$(memory_cgroup_dir 2>/dev/null)" || return 0
    dir=${where#* }
    [ -d "$dir" ] || return 0
    [ -n "$(cat "$dir/cgroup.procs" 2>/dev/null)" ] || rmdir "$dir" 2>/dev/null || true
}

# Drop the clean pages of DIR's files from the OS cache: a page cached before the limit (the
# build, an earlier life of the server) would otherwise be read from memory outside it.
memory_evict() {
    [ -d "$1" ] || return 0
    find "$1" -type f -size +0 -exec dd of=/dev/null iflag=nocache count=0 status=none if={} \; 2>/dev/null || true
}

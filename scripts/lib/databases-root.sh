# Where the server binaries come from: the host when new enough, else a Debian 13 root built
# with debootstrap; other server versions (up-instance ENGINE@VERSION) from a root of another
# Debian suite, built the same way (sourced by scripts/databases.sh).
# shellcheck shell=bash
# shellcheck disable=SC2034  # MARIADB_MODE, PG_BIN, ... are read by the other sourced files

MIRROR="${ANNBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ROOT_PACKAGES="" # root_packages, set by ensure_root
ROOT_SUITE=trixie # the Debian suite of $ROOT

# Point ROOT (which in_env, in_env_as, host_path use) at the root of SUITE: debian-SUITE in the
# cache dir. trixie is the main root; another suite holds other server versions.
use_root() {
    ROOT_SUITE=$1
    ROOT="$CACHE/debian-$1"
}

suite_title() {
    case "$1" in
    trixie) echo "Debian 13 (trixie)" ;;
    sid) echo "Debian unstable (sid)" ;;
    *) echo "Debian $1" ;;
    esac
}

# apt settings a suite's root needs: sid's Release file on the mirrors is often past its
# Valid-Until date (it is only re-signed when the archive changes), which apt refuses.
suite_apt_conf() {
    case "$1" in
    sid) echo 'Acquire::Check-Valid-Until "false";' ;;
    esac
}

# A log file of the current root: NAME.log for trixie (as before other suites), NAME-SUITE.log.
root_log() {
    if [ "$ROOT_SUITE" = trixie ]; then echo "$LOG_DIR/$1.log"; else echo "$LOG_DIR/$1-$ROOT_SUITE.log"; fi
}

# The packages every engine needs in the root (<db>_packages), in engine order.
root_packages() {
    local e
    for e in $ENGINES; do "${e}_packages"; done | tr ' ' '\n' | sed '/^$/d' | awk '!seen[$0]++' | paste -sd ' ' -
}

# Decide each engine's <DB>_MODE (host | root) and the binaries it uses.
# ANNBENCH_SERVERS_FROM=host|root forces one source for all.
detect_modes() {
    local from="${ANNBENCH_SERVERS_FROM:-auto}" e
    case "$from" in auto | host | root) ;; *) die "ANNBENCH_SERVERS_FROM must be auto, host or root (got '$from')" ;; esac
    for e in $ENGINES; do "${e}_detect" "$from"; done
}

# Does any engine run from the root?
any_root_mode() {
    local e
    for e in $ENGINES; do [ "$(engine_mode "$e")" != root ] || return 0; done
    return 1
}

# A root is complete once it exists: build_root renames it into place as its last step.
root_ready() {
    [ -f "$ROOT/var/lib/dpkg/status" ] && [ -x "$ROOT/usr/bin/apt-get" ]
}

# The root packages not installed in the root (a root built before an engine was added).
root_missing_packages() {
    local p installed
    # shellcheck disable=SC2016  # dpkg-query's format, not shell
    installed="$(chroot "$ROOT" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 2>/dev/null | awk '$1 == "ii" {print $2}')"
    for p in $ROOT_PACKAGES; do
        printf '%s\n' "$installed" | grep -qxF "$p" || printf '%s\n' "$p"
    done | paste -sd ' ' -
}

# Install what root_missing_packages names, from the package lists the root has; when that fails
# (the mirror dropped those versions), from fresh ones. Servers already running from the root keep
# running (the policy-rc.d written by build_root stops packages from starting services).
root_install_missing() {
    local missing log t0=$SECONDS
    log="$(root_log root-packages)"
    missing="$(root_missing_packages)"
    [ -n "$missing" ] || return 0
    say "installing $missing in the root (log: $log)"
    local apt="apt-get install -y --no-install-recommends $missing && apt-get clean"
    in_env root env DEBIAN_FRONTEND=noninteractive sh -c "$apt" >>"$log" 2>&1 9>&- ||
        in_env root env DEBIAN_FRONTEND=noninteractive sh -c \
            "apt-get -o Acquire::Languages=none update && $apt" >>"$log" 2>&1 9>&- ||
        fail_log "installing $missing in the root failed" "$log"
    say "installed in $((SECONDS - t0)) s"
}

# The main root (trixie) with every engine's packages.
ensure_root() { ensure_suite_root trixie "$(root_packages)"; }

# Point ROOT at SUITE's root and build it once with PACKAGES (into a temporary dir, renamed
# when complete), then make sure /proc and /dev/shm are mounted in it (they are gone after a
# reboot) and it has PACKAGES (a root built before one was added).
ensure_suite_root() {
    is_root || die "the servers run inside a $(suite_title "$1") root, which needs root (debootstrap, chroot): run with sudo"
    use_root "$1"
    ROOT_PACKAGES=$2
    if ! root_ready; then build_root; fi
    mount_root
    root_install_missing
}

mount_root() {
    mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
    mkdir -p "$ROOT/dev/shm"
    mountpoint -q "$ROOT/dev/shm" || mount -t tmpfs -o mode=1777,nosuid,nodev shm "$ROOT/dev/shm"
}

umount_root_at() {
    local r=$1
    mountpoint -q "$r/dev/shm" 2>/dev/null && umount "$r/dev/shm"
    mountpoint -q "$r/proc" 2>/dev/null && umount "$r/proc"
    true
}

# Build the root of ROOT_SUITE in ROOT with ROOT_PACKAGES.
build_root() {
    local suite=$ROOT_SUITE tmp="$ROOT.partial" log t0=$SECONDS script=$ROOT_SUITE keyring=() apt_conf
    log="$(root_log build-root)"
    mkdir -p "$LOG_DIR"
    say "building a $(suite_title "$suite") root in $ROOT (first time only; log: $log)"
    if ! command -v debootstrap >/dev/null; then
        command -v apt-get >/dev/null || die "no debootstrap and no apt-get: install MariaDB >= 11.7 and PostgreSQL + pgvector >= 0.7 yourself and pass their URLs (docs/servers.md)"
        say "installing debootstrap on the host"
        DEBIAN_FRONTEND=noninteractive apt-get update >>"$log" 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap debian-archive-keyring >>"$log" 2>&1 ||
            fail_log "apt-get install debootstrap failed" "$log"
    fi
    # Older debootstrap (e.g. on Ubuntu) may not know trixie yet; sid's script builds it.
    [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=/usr/share/debootstrap/scripts/sid
    [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] && keyring=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
    umount_root_at "$tmp"
    rm -rf "$tmp"
    # dpkg fsyncs every file; a scratch root does not need that (eatmydata when the host has it).
    local fast=() script_arg=()
    if command -v eatmydata >/dev/null; then fast=(eatmydata); fi
    if [ "$script" != "$suite" ]; then script_arg=("$script"); fi
    "${fast[@]}" debootstrap --variant=minbase "${keyring[@]}" "$suite" "$tmp" "$MIRROR" \
        "${script_arg[@]}" >>"$log" 2>&1 ||
        fail_log "debootstrap failed (mirror $MIRROR; set ANNBENCH_DEBIAN_MIRROR to use another)" "$log"
    local t1=$SECONDS
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod +x "$tmp/usr/sbin/policy-rc.d"
    printf 'force-unsafe-io\npath-exclude=/usr/share/doc/*\npath-exclude=/usr/share/man/*\n' \
        >"$tmp/etc/dpkg/dpkg.cfg.d/annbench-fast"
    apt_conf="$(suite_apt_conf "$suite")"
    if [ -n "$apt_conf" ]; then echo "$apt_conf" >"$tmp/etc/apt/apt.conf.d/99annbench-$suite"; fi
    mount -t proc proc "$tmp/proc"
    if ! chroot "$tmp" env DEBIAN_FRONTEND=noninteractive sh -c \
        "apt-get -o Acquire::Languages=none update && apt-get install -y --no-install-recommends $ROOT_PACKAGES && apt-get clean" >>"$log" 2>&1; then
        umount_root_at "$tmp"
        fail_log "installing $ROOT_PACKAGES in the root failed" "$log"
    fi
    umount_root_at "$tmp"
    rm -rf "$ROOT"
    mv "$tmp" "$ROOT"
    say "root ready in $((SECONDS - t0)) s (debootstrap $((t1 - t0)) s, packages $((SECONDS - t1)) s)"
}

fail_log() {
    tail -n 20 "$2" >&2 || true
    die "$1 (full log: $2)"
}

# Run a command as root in the server's environment (the chroot, or the host).
in_env() {
    local mode=$1
    shift
    if [ "$mode" = root ]; then
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root chroot "$ROOT" "$@"
    else
        "$@"
    fi
}

# Run a command as USER in the server's environment.
in_env_as() {
    local mode=$1 user=$2
    shift 2
    if [ "$mode" = root ]; then
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/tmp chroot --userspec="$user:$user" "$ROOT" "$@"
    elif is_root; then
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/tmp setpriv --reuid="$user" --regid="$user" --init-groups "$@"
    else
        "$@"
    fi
}

# Host path of a path inside the server's environment.
host_path() {
    if [ "$1" = root ]; then echo "$ROOT$2"; else echo "$2"; fi
}

# Where data dirs live inside the environment. Host mode as root uses a directory under
# /var/lib/annbench named after the cache (the service users cannot enter a cache under /root,
# and each cache dir has servers of its own); as a normal user, the cache itself.
data_base() {
    if [ "$1" = root ]; then
        echo /var/lib/annbench
    elif is_root; then
        echo "${ANNBENCH_DATA_DIR:-/var/lib/annbench/$(printf '%s' "$CACHE" | sha256sum | cut -c1-12)}"
    else
        echo "${ANNBENCH_DATA_DIR:-$CACHE/data}"
    fi
}

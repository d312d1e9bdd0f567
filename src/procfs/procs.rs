//! Linux `/proc` readers: CPU ticks of the machine and of processes, and the local database
//! server processes annbench is connected to. Everything returns `None`/empty where `/proc`
//! is missing or unreadable (another OS, a container without it): callers record "unknown".
//!
//! A server is identified by its connections to this process, never by name alone (other
//! servers of the same kind may run on the machine): the peer of each Unix-socket connection
//! (`SO_PEERCRED`) and the owner of the other end of each loopback TCP connection (found in
//! `/proc/net/tcp*` and `/proc/<pid>/fd`, which needs the same user or root). A peer counts
//! when its command is a known server; its server is the topmost ancestor with the same
//! command (PostgreSQL's postmaster) and all that one's descendants.

use std::collections::{BTreeSet, HashMap};

/// Whether `command` is a database server process: one of `servers`, the commands the
/// databases declare ([`crate::registry::DatabaseDecl::server_commands`], passed in by the
/// caller: this module sits below the databases).
fn is_server_command(command: &str, servers: &[&str]) -> bool {
    servers.contains(&command)
}

/// Clock ticks per second of `/proc` CPU times.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// (busy, steal) ticks of all cores from `/proc/stat`; busy = user, nice, system, irq, softirq
/// (guest time is inside user).
pub fn machine_ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some((at(0) + at(1) + at(2) + at(5) + at(6), at(7)))
}

/// The fields of `/proc/<pid>/stat` after the command (which may hold spaces and parens).
fn stat_fields(pid: &str) -> Option<(String, Vec<String>)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest = text.get(close + 1..)?;
    Some((comm, rest.split_whitespace().map(str::to_string).collect()))
}

/// utime + stime ticks of a process (all its threads).
pub fn process_ticks(pid: &str) -> Option<u64> {
    let (_, f) = stat_fields(pid)?;
    // After the command: state(0) ppid(1) ... utime(11) stime(12).
    let get = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
    Some(get(11)? + get(12)?)
}

/// CPU ticks of one process from `/proc/<pid>/stat`: its own (all threads, live and exited)
/// and those of its waited-for children that have exited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ticks {
    pub user: u64,
    pub system: u64,
    /// cutime and cstime: children that exited and were reaped (PostgreSQL's parallel
    /// workers).
    pub children_user: u64,
    pub children_system: u64,
}

/// [`Ticks`] of `pid`.
pub fn ticks(pid: i32) -> Option<Ticks> {
    let (_, f) = stat_fields(&pid.to_string())?;
    let get = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
    Some(Ticks {
        user: get(11)?,
        system: get(12)?,
        children_user: get(13)?,
        children_system: get(14)?,
    })
}

/// (voluntary, involuntary) context switches of every live thread of `pid`, from
/// `/proc/<pid>/task/*/status` (the process's own status counts its first thread only).
pub fn context_switches(pid: i32) -> Option<(u64, u64)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let (mut vol, mut invol) = (0, 0);
    for t in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(t.path().join("status")) else {
            continue;
        };
        for line in text.lines() {
            let num = |l: &str| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|x| x.parse::<u64>().ok())
            };
            if line.starts_with("voluntary_ctxt_switches:") {
                vol += num(line).unwrap_or(0);
            } else if line.starts_with("nonvoluntary_ctxt_switches:") {
                invol += num(line).unwrap_or(0);
            }
        }
    }
    Some((vol, invol))
}

/// Proportional resident memory (PSS, bytes) of `pid` from `/proc/<pid>/smaps_rollup`: shared
/// pages (PostgreSQL's shared buffers) split among the processes that map them, so the sum
/// over a server's processes counts each page once. Falls back to `VmRSS` where smaps_rollup
/// is missing (kernels before 4.14).
pub fn resident_bytes(pid: i32) -> Option<u64> {
    let kb = |text: &str, key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|x| x.parse::<u64>().ok())
    };
    if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
        if let Some(v) = kb(&text, "Pss:") {
            return Some(v * 1024);
        }
    }
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    kb(&text, "VmRSS:").map(|v| v * 1024)
}

/// The command of `pid` (`postgres`, `mariadbd`).
pub fn command(pid: i32) -> Option<String> {
    comm_and_parent(pid).map(|(c, _)| c)
}

fn comm_and_parent(pid: i32) -> Option<(String, i32)> {
    let (comm, f) = stat_fields(&pid.to_string())?;
    Some((comm, f.get(1)?.parse().ok()?))
}

/// Process ids of a server whose top process is `root`: it and all its descendants.
pub fn process_tree(root: i32) -> Vec<i32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() && out.len() < 10_000 {
        let p = out[i];
        let path = format!("/proc/{p}/task/{p}/children");
        if let Ok(text) = std::fs::read_to_string(path) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
        i += 1;
    }
    out
}

/// The topmost server processes (one per server) this process is connected to, and whether
/// some loopback peer could not be identified (its owner's `/proc/<pid>/fd` is unreadable).
/// `servers`: the commands of the database server processes.
pub fn connected_servers(servers: &[&str]) -> (BTreeSet<i32>, bool) {
    connected_servers_at(servers, None)
}

/// [`connected_servers`], counting only the TCP connections to `port` when given: with two
/// local servers of one kind (an interleaved run), the one a backend's connections reach.
pub fn connected_servers_at(servers: &[&str], port: Option<u16>) -> (BTreeSet<i32>, bool) {
    let mut peers = BTreeSet::new();
    let mut tcp_inodes = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        for entry in dir.flatten() {
            let Ok(target) = std::fs::read_link(entry.path()) else {
                continue;
            };
            let Some(inode) = socket_inode(&target.to_string_lossy()) else {
                continue;
            };
            let fd: i32 = entry.file_name().to_string_lossy().parse().unwrap_or(-1);
            match unix_peer(fd) {
                Some(pid) => {
                    peers.insert(pid);
                }
                None => tcp_inodes.push(inode),
            }
        }
    }
    let peer_inodes = tcp_peer_inodes(&tcp_inodes, port);
    let (owners, unseen) = socket_owners(&peer_inodes, servers);
    peers.extend(owners);
    let roots = peers
        .into_iter()
        .filter_map(|pid| {
            let (comm, _) = comm_and_parent(pid)?;
            is_server_command(&comm, servers).then(|| top_of(pid, &comm))
        })
        .collect();
    (roots, unseen)
}

/// Climb parents while they run the same command (PostgreSQL backend -> postmaster).
fn top_of(pid: i32, comm: &str) -> i32 {
    let mut top = pid;
    while let Some((_, parent)) = comm_and_parent(top) {
        match comm_and_parent(parent) {
            Some((c, _)) if c == comm && parent > 1 => top = parent,
            _ => break,
        }
    }
    top
}

fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The peer process of a connected Unix socket (`None` for other sockets, and on systems
/// without `SO_PEERCRED`).
#[cfg(not(target_os = "linux"))]
fn unix_peer(_fd: i32) -> Option<i32> {
    None
}

/// The peer process of a connected Unix socket (`None` for other sockets).
#[cfg(target_os = "linux")]
fn unix_peer(fd: i32) -> Option<i32> {
    let mut cred: libc::ucred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let mut domain: libc::c_int = 0;
    let mut dlen = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into the owned, correctly sized values;
    // a descriptor that is not a socket only makes it fail.
    let ok = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&mut domain as *mut libc::c_int).cast(),
            &mut dlen,
        ) == 0
            && domain == libc::AF_UNIX
            && libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            ) == 0
    };
    (ok && cred.pid > 0 && cred.pid != std::process::id() as i32).then_some(cred.pid)
}

/// (local, remote, inode) of every TCP socket of this network namespace.
fn tcp_table() -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let (Some(l), Some(r), Some(i)) = (f.get(1), f.get(2), f.get(9)) {
                if let Ok(inode) = i.parse() {
                    out.push((l.to_string(), r.to_string(), inode));
                }
            }
        }
    }
    out
}

/// Inodes of the other ends of our TCP sockets that live on this machine.
fn tcp_peer_inodes(ours: &[u64], port: Option<u16>) -> Vec<u64> {
    if ours.is_empty() {
        return Vec::new();
    }
    let table = tcp_table();
    let by_ends: HashMap<(&str, &str), u64> = table
        .iter()
        .map(|(l, r, i)| ((l.as_str(), r.as_str()), *i))
        .collect();
    table
        .iter()
        .filter(|(_, _, i)| ours.contains(i))
        .filter(|(_, r, _)| port.is_none_or(|p| hex_port(r) == Some(p)))
        .filter_map(|(l, r, _)| by_ends.get(&(r.as_str(), l.as_str())).copied())
        .filter(|&i| i != 0)
        .collect()
}

/// The port of a `/proc/net/tcp` address (`0100007F:3A5A`).
fn hex_port(addr: &str) -> Option<u16> {
    u16::from_str_radix(addr.rsplit_once(':')?.1, 16).ok()
}

/// Processes (of the `servers` commands) holding the given socket inodes, and whether an
/// inode was left without an owner because some server's descriptors could not be read.
fn socket_owners(inodes: &[u64], servers: &[&str]) -> (Vec<i32>, bool) {
    if inodes.is_empty() {
        return (Vec::new(), false);
    }
    let mut found: Vec<i32> = Vec::new();
    let mut missing: BTreeSet<u64> = inodes.iter().copied().collect();
    let mut unreadable = false;
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return (found, true);
    };
    for p in procs.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let is_server = comm_and_parent(pid).is_some_and(|(c, _)| is_server_command(&c, servers));
        if !is_server {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            unreadable = true;
            continue;
        };
        for fd in fds.flatten() {
            let inode = std::fs::read_link(fd.path())
                .ok()
                .and_then(|t| socket_inode(&t.to_string_lossy()));
            if inode.is_some_and(|i| missing.remove(&i)) {
                found.push(pid);
            }
        }
        if missing.is_empty() {
            break;
        }
    }
    (found, !missing.is_empty() && unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn machine_and_own_ticks_are_read() {
        assert!(machine_ticks().is_some_and(|(busy, _)| busy > 0));
        let mine = std::process::id().to_string();
        // Burn a little CPU so the process has a tick to show.
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 30 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0 && process_ticks(&mine).is_some());
        assert!(ticks_per_second() >= 1.0);
    }

    #[test]
    fn a_unix_socket_peer_is_found_and_a_non_server_is_not_a_server() {
        let (a, _b) = UnixStream::pair().unwrap();
        // The peer of a socket pair is this very process: excluded.
        assert_eq!(unix_peer(a.as_raw_fd()), None);
        // The test process is no database server: nothing is reported.
        let (servers, _) = connected_servers(&["mariadbd", "mysqld", "postgres", "postmaster"]);
        assert!(servers.iter().all(|&p| p != std::process::id() as i32));
    }

    #[test]
    fn own_ticks_switches_and_memory_are_read() {
        let me = std::process::id() as i32;
        let t = ticks(me).unwrap();
        assert!(t.user + t.system < u64::MAX / 2);
        // This thread sleeps: at least one voluntary switch of some thread of ours.
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (vol, _) = context_switches(me).unwrap();
        assert!(vol > 0);
        assert!(resident_bytes(me).unwrap() > 1 << 20);
        assert!(command(me).is_some());
        assert_eq!(ticks(i32::MAX), None);
        assert_eq!(context_switches(i32::MAX), None);
    }

    #[test]
    fn a_process_tree_starts_with_its_root() {
        let me = std::process::id() as i32;
        assert_eq!(process_tree(me)[0], me);
    }
}

//! Linux `/proc` readers, through the `procfs` crate: CPU ticks of the machine and of
//! processes, context switches, resident memory, and the local database server processes
//! annbench is connected to. Everything returns `None`/empty where `/proc` is missing or
//! unreadable (another OS, a container without it): callers record "unknown".
//!
//! A server is identified by its connections to this process, never by name alone (other
//! servers of the same kind may run on the machine): the peer of each Unix-socket connection
//! (`SO_PEERCRED`) and the owner of the other end of each loopback TCP connection (found in
//! `/proc/net/tcp*` and `/proc/<pid>/fd`, which needs the same user or root). A peer counts
//! when its command is a known server; its server is the topmost ancestor with the same
//! command (PostgreSQL's postmaster) and all that one's descendants.

use procfs::CurrentSI;
use procfs::process::{FDTarget, Process};
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;

/// Whether `command` is a database server process: one of `servers`, the commands the
/// databases declare ([`crate::registry::DatabaseDecl::server_commands`], passed in by the
/// caller: this module sits below the databases).
fn is_server_command(command: &str, servers: &[&str]) -> bool {
    servers.contains(&command)
}

/// Clock ticks per second of `/proc` CPU times.
pub fn ticks_per_second() -> f64 {
    procfs::ticks_per_second().max(1) as f64
}

/// Busy and steal ticks of all cores from `/proc/stat`, and the number of cores; busy =
/// user, nice, system, irq, softirq (guest time is inside user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineTicks {
    pub busy: u64,
    pub steal: u64,
    pub cores: usize,
}

/// [`MachineTicks`] now.
pub fn machine_ticks() -> Option<MachineTicks> {
    let stats = procfs::KernelStats::current().ok()?;
    let t = &stats.total;
    let opt = |v: Option<u64>| v.unwrap_or(0);
    Some(MachineTicks {
        busy: t.user + t.nice + t.system + opt(t.irq) + opt(t.softirq),
        steal: opt(t.steal),
        cores: stats.cpu_time.len().max(1),
    })
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

impl Ticks {
    /// The process's own user + system ticks.
    pub fn own(&self) -> u64 {
        self.user + self.system
    }
}

/// [`Ticks`] of `pid`.
pub fn ticks(pid: i32) -> Option<Ticks> {
    ticks_of(&Process::new(pid).ok()?)
}

/// [`Ticks`] of this process.
pub fn own_ticks() -> Option<Ticks> {
    ticks_of(&Process::myself().ok()?)
}

fn ticks_of(p: &Process) -> Option<Ticks> {
    let s = p.stat().ok()?;
    Some(Ticks {
        user: s.utime,
        system: s.stime,
        children_user: s.cutime.max(0) as u64,
        children_system: s.cstime.max(0) as u64,
    })
}

/// (voluntary, involuntary) context switches of every live thread of `pid`, from
/// `/proc/<pid>/task/*/status` (the process's own status counts its first thread only).
pub fn context_switches(pid: i32) -> Option<(u64, u64)> {
    let tasks = Process::new(pid).ok()?.tasks().ok()?;
    let (mut vol, mut invol) = (0, 0);
    // A thread that ends while the tasks are listed is skipped.
    for status in tasks.flatten().filter_map(|t| t.status().ok()) {
        vol += status.voluntary_ctxt_switches.unwrap_or(0);
        invol += status.nonvoluntary_ctxt_switches.unwrap_or(0);
    }
    Some((vol, invol))
}

/// Proportional resident memory (PSS, bytes) of `pid` from `/proc/<pid>/smaps_rollup`: shared
/// pages (PostgreSQL's shared buffers) split among the processes that map them, so the sum
/// over a server's processes counts each page once. Falls back to `VmRSS` where smaps_rollup
/// is missing (kernels before 4.14).
pub fn resident_bytes(pid: i32) -> Option<u64> {
    let p = Process::new(pid).ok()?;
    let pss = p.smaps_rollup().ok().and_then(|r| {
        r.memory_map_rollup
            .0
            .first()
            .and_then(|m| m.extension.map.get("Pss").copied())
    });
    pss.or_else(|| Some(p.status().ok()?.vmrss? * 1024))
}

/// Bytes the processes caused to be read from and written to storage, from
/// `/proc/<pid>/io` (`read_bytes`, `write_bytes`: page-cache hits are not counted, direct
/// I/O is). Counts every thread, live or ended, and the children the process has reaped
/// (the kernel adds a reaped child's counters to its parent's). Needs the same user or root.
pub fn storage_bytes(pid: i32) -> Option<(u64, u64)> {
    Some(storage_of(&Process::new(pid).ok()?.io().ok()?))
}

/// (read_bytes, write_bytes): what went to storage, not `rchar`/`wchar` (every read and
/// write call, page-cache hits and sockets included).
fn storage_of(io: &procfs::process::Io) -> (u64, u64) {
    (io.read_bytes, io.write_bytes)
}

/// The command of `pid` (`postgres`, `mariadbd`).
pub fn command(pid: i32) -> Option<String> {
    comm_and_parent(pid).map(|(c, _)| c)
}

fn comm_and_parent(pid: i32) -> Option<(String, i32)> {
    let s = Process::new(pid).ok()?.stat().ok()?;
    Some((s.comm, s.ppid))
}

/// Process ids of a server whose top process is `root`: it and all its descendants.
pub fn process_tree(root: i32) -> Vec<i32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() && out.len() < 10_000 {
        let p = out[i];
        let children = Process::new(p)
            .and_then(|p| p.task_main_thread())
            .and_then(|t| t.children());
        if let Ok(children) = children {
            out.extend(children.into_iter().map(|c| c as i32));
        }
        i += 1;
    }
    out
}

/// The socket inodes of `process`'s descriptors, with the descriptor numbers.
fn socket_fds(process: &Process) -> Option<Vec<(i32, u64)>> {
    let fds = process.fd().ok()?;
    Some(
        fds.flatten()
            .filter_map(|fd| match fd.target {
                FDTarget::Socket(inode) => Some((fd.fd, inode)),
                _ => None,
            })
            .collect(),
    )
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
    let mine = Process::myself().ok().and_then(|p| socket_fds(&p));
    for (fd, inode) in mine.unwrap_or_default() {
        match unix_peer(fd) {
            Some(pid) => {
                peers.insert(pid);
            }
            None => tcp_inodes.push(inode),
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

/// The peer process of a connected Unix socket (`None` for other sockets, and on systems
/// without `SO_PEERCRED`).
#[cfg(not(target_os = "linux"))]
fn unix_peer(_fd: i32) -> Option<i32> {
    None
}

/// The peer process of a connected Unix socket (`None` for other sockets). Hand-written:
/// `SO_PEERCRED` is a socket option, not a `/proc` file, so the `procfs` crate has no reader
/// for it (`/proc/net/unix` lists no peers).
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
fn tcp_table() -> Vec<(SocketAddr, SocketAddr, u64)> {
    let v4 = procfs::net::tcp().unwrap_or_default();
    let v6 = procfs::net::tcp6().unwrap_or_default();
    v4.into_iter()
        .chain(v6)
        .map(|e| (e.local_address, e.remote_address, e.inode))
        .collect()
}

/// Inodes of the other ends of our TCP sockets that live on this machine.
fn tcp_peer_inodes(ours: &[u64], port: Option<u16>) -> Vec<u64> {
    if ours.is_empty() {
        return Vec::new();
    }
    let table = tcp_table();
    let by_ends: HashMap<(SocketAddr, SocketAddr), u64> =
        table.iter().map(|&(l, r, i)| ((l, r), i)).collect();
    table
        .iter()
        .filter(|(_, _, i)| ours.contains(i))
        .filter(|(_, r, _)| port.is_none_or(|p| r.port() == p))
        .filter_map(|&(l, r, _)| by_ends.get(&(r, l)).copied())
        .filter(|&i| i != 0)
        .collect()
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
    let Ok(procs) = procfs::process::all_processes() else {
        return (found, true);
    };
    for p in procs.flatten() {
        let is_server = p.stat().is_ok_and(|s| is_server_command(&s.comm, servers));
        if !is_server {
            continue;
        }
        let Some(sockets) = socket_fds(&p) else {
            unreadable = true;
            continue;
        };
        for (_, inode) in sockets {
            if missing.remove(&inode) {
                found.push(p.pid);
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
        assert!(machine_ticks().is_some_and(|m| m.busy > 0 && m.cores > 0));
        // Burn a little CPU so the process has a tick to show.
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 30 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0 && own_ticks().is_some());
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
        // Storage I/O of our own process is readable; a process that does not exist has none
        // (absent, not zero).
        assert!(storage_bytes(me).is_some());
        assert_eq!(storage_bytes(i32::MAX), None);
    }

    #[test]
    fn io_text_gives_the_bytes_that_went_to_storage_through_the_crate() {
        use procfs::FromBufRead;
        let text = "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\n\
                    read_bytes: 16384\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        let io = procfs::process::Io::from_buf_read(text.as_bytes()).unwrap();
        assert_eq!(storage_of(&io), (16384, 8192));
    }

    #[test]
    fn a_process_tree_starts_with_its_root() {
        let me = std::process::id() as i32;
        assert_eq!(process_tree(me)[0], me);
    }
}

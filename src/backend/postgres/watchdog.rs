//! A bound on the waits for a PostgreSQL server that stops answering (SIGSTOP, a hung
//! machine, a partition). The sync driver has no read timeout, and TCP keepalives never fire
//! for a stopped server: its kernel still acknowledges every packet. So each connection's
//! socket is found once, after connecting (on Linux: over TCP, the socket whose local port is
//! the client port the server sees; over a Unix socket, the one Unix socket the connection
//! attempt opened), and a watchdog thread shuts it down when
//! - a call armed with a limit (a query, a build, a build's progress poll) runs past it, or
//! - a stop was requested ([`request_stop`]: Ctrl-C, SIGTERM, Python's KeyboardInterrupt) and
//!   the run has not let go of the server within [`STOP_GRACE`].
//!
//! The driver then returns a connection error at once; [`fired`] tells the caller to report
//! the server as not answering. Where the socket cannot be found (another OS, a proxy that
//! rewrites ports), the connection is not bounded, and [`Conn`] is `None`.

use postgres::Client;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a run asked to stop may still wait for a server before its sockets are shut.
pub const STOP_GRACE: Duration = Duration::from_secs(10);
/// The longest a single query may take (the same bound as MariaDB's read timeout).
pub const QUERY_LIMIT: Duration = Duration::from_secs(120);
/// The longest a build's progress poll or cancel request may take.
pub const WATCH_LIMIT: Duration = Duration::from_secs(30);
/// How long past `--timeout` a build may go on when the server does not act on the cancel.
pub const BUILD_SLACK: Duration = Duration::from_secs(30);
const TICK: Duration = Duration::from_millis(100);

/// A connection's socket, as the watchdog knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conn {
    fd: i32,
    /// The socket's inode: a reused descriptor number is never taken for this socket.
    inode: u64,
}

#[derive(Debug)]
struct Armed {
    conn: Conn,
    since: Instant,
    limit: Duration,
    id: u64,
}

#[derive(Default)]
struct State {
    conns: Vec<Conn>,
    armed: Vec<Armed>,
    next_id: u64,
    stop_at: Option<Instant>,
    /// Connections shut because they did not answer, and why.
    fired: Vec<(Conn, String)>,
}

fn state() -> &'static Mutex<State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("annbench-pg-watchdog".into())
            .spawn(watch_loop);
        Mutex::new(State::default())
    })
}

fn watch_loop() {
    loop {
        std::thread::sleep(TICK);
        let Ok(mut s) = state().lock() else { return };
        let now = Instant::now();
        s.conns.retain(|c| c.alive());
        let mut shut: Vec<(Conn, String)> = s
            .armed
            .iter()
            .filter(|a| now.duration_since(a.since) >= a.limit)
            .map(|a| (a.conn, format!("no answer within {} s", a.limit.as_secs())))
            .collect();
        if s.stop_at
            .is_some_and(|t| now.duration_since(t) >= STOP_GRACE)
        {
            let why = format!(
                "the run was asked to stop and the server did not let go within {} s",
                STOP_GRACE.as_secs()
            );
            shut.extend(s.conns.iter().map(|c| (*c, why.clone())));
        }
        for (c, why) in shut {
            if !s.fired.iter().any(|(f, _)| *f == c) && c.alive() {
                // SAFETY: the descriptor holds this connection's socket (checked by inode
                // under the lock); shutting it down makes the driver's pending read return.
                unsafe { libc::shutdown(c.fd, libc::SHUT_RDWR) };
                s.fired.push((c, why));
            }
        }
        s.fired.retain(|(c, _)| c.alive());
    }
}

/// Ask every PostgreSQL wait of this process to end within [`STOP_GRACE`].
pub fn request_stop() {
    if let Ok(mut s) = state().lock() {
        s.stop_at.get_or_insert_with(Instant::now);
    }
}

/// Forget a stop request (a new run starts).
pub fn clear_stop() {
    if let Ok(mut s) = state().lock() {
        s.stop_at = None;
    }
}

/// The sockets this process has open now (taken before a connection attempt).
pub fn sockets() -> Vec<Conn> {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|fd| {
            Some(Conn {
                fd,
                inode: inode(fd)?,
            })
        })
        .collect()
}

/// Find `client`'s socket and put it under watch (`None` where it cannot be found).
/// `before` is [`sockets`] from before the connection attempt.
pub fn register(client: &mut Client, before: &[Conn]) -> Option<Conn> {
    let row = client
        .query_one("SELECT inet_client_port(), inet_server_port()", &[])
        .ok()?;
    let conn = match (row.get::<_, Option<i32>>(0), row.get::<_, Option<i32>>(1)) {
        (Some(client_port), Some(server_port)) => find_tcp(client_port, server_port)?,
        // A Unix socket: the one opened since `before` (none or several: another thread
        // connected at the same moment, and the connection is left unbounded).
        _ => {
            let mut new = sockets()
                .into_iter()
                .filter(|c| !before.contains(c) && family(c.fd) == Some(libc::AF_UNIX));
            let one = new.next()?;
            if new.next().is_some() {
                return None;
            }
            one
        }
    };
    let mut s = state().lock().ok()?;
    s.conns.retain(|c| c.alive() && *c != conn);
    s.conns.push(conn);
    Some(conn)
}

/// Why the watchdog shut `conn` down, if it did.
pub fn fired(conn: Option<Conn>) -> Option<String> {
    let c = conn?;
    let s = state().lock().ok()?;
    s.fired
        .iter()
        .find(|(f, _)| *f == c)
        .map(|(_, why)| why.clone())
}

/// While the returned guard lives, a call on `conn` may take at most `limit`.
pub fn arm(conn: Option<Conn>, limit: Duration) -> ArmGuard {
    let id = conn.and_then(|conn| {
        let mut s = state().lock().ok()?;
        s.next_id += 1;
        let id = s.next_id;
        s.armed.push(Armed {
            conn,
            since: Instant::now(),
            limit,
            id,
        });
        Some(id)
    });
    ArmGuard { id }
}

/// Ends the bound set by [`arm`].
pub struct ArmGuard {
    id: Option<u64>,
}

impl Drop for ArmGuard {
    fn drop(&mut self) {
        if let (Some(id), Ok(mut s)) = (self.id, state().lock()) {
            s.armed.retain(|a| a.id != id);
        }
    }
}

impl Conn {
    fn alive(&self) -> bool {
        inode(self.fd) == Some(self.inode)
    }
}

/// A socket descriptor's inode.
fn inode(fd: i32) -> Option<u64> {
    // SAFETY: fstat writes into the zeroed struct; a closed fd gives an error.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    (ok && st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some(st.st_ino)
}

/// The descriptor of the TCP socket from `client_port` to `server_port`.
fn find_tcp(client_port: i32, server_port: i32) -> Option<Conn> {
    let mut found = sockets().into_iter().filter(|c| {
        port(c.fd, false) == Some(client_port) && port(c.fd, true) == Some(server_port)
    });
    let one = found.next()?;
    // Two would be ambiguous: better unbounded than shutting the wrong one.
    found.next().is_none().then_some(one)
}

/// The address family of socket `fd`.
fn family(fd: i32) -> Option<i32> {
    // SAFETY: the address is written into zeroed storage of the length passed.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let p = (&mut addr as *mut libc::sockaddr_storage).cast::<libc::sockaddr>();
    (unsafe { libc::getsockname(fd, p, &mut len) } == 0).then_some(i32::from(addr.ss_family))
}

/// The local (or, with `peer`, the remote) TCP port of socket `fd`.
fn port(fd: i32, peer: bool) -> Option<i32> {
    // SAFETY: the address is written into zeroed storage of the length passed.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let p = (&mut addr as *mut libc::sockaddr_storage).cast::<libc::sockaddr>();
    let rc = unsafe {
        if peer {
            libc::getpeername(fd, p, &mut len)
        } else {
            libc::getsockname(fd, p, &mut len)
        }
    };
    if rc != 0 {
        return None;
    }
    let port = match i32::from(addr.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says this is a sockaddr_in.
            let a =
                unsafe { &*(&addr as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            a.sin_port
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this is a sockaddr_in6.
            let a =
                unsafe { &*(&addr as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            a.sin6_port
        }
        _ => return None,
    };
    Some(i32::from(u16::from_be(port)))
}

/// [`super::errors::pg_err`], except that a connection the watchdog shut is reported as a
/// server that did not answer.
pub fn pg_err(conn: Option<Conn>, e: postgres::Error, what: &str) -> crate::Error {
    if let Some(why) = fired(conn) {
        return crate::Error::Server(format!(
            "PostgreSQL stopped answering while {what}: {why}, so annbench closed the \
             connection (is the server stopped, e.g. by SIGSTOP, or the machine hung?)"
        ));
    }
    super::errors::pg_err(e, what)
}

/// Whether `conn` is under watch (for tests).
#[doc(hidden)]
pub fn is_registered(conn: Conn) -> bool {
    state().lock().is_ok_and(|s| s.conns.contains(&conn))
}

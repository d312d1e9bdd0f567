//! Two sweeps on one server must never measure each other's index. Two guards, for every
//! SQL database:
//!
//! - a **table lock**: a session-level advisory lock per table (the server's own, see
//!   [`Dialect::try_lock`](super::Dialect::try_lock)), taken by the admin connection before it loads or
//!   reuses the table and held until that connection closes, so through every build and point
//!   of the algorithm's sweep. A second run on the same table retries for a few seconds (the
//!   moment a server takes to notice a client that died), then fails naming the holder. The
//!   server frees the lock when the holding session ends, however the process died, so a held
//!   lock also tells a live run from a dead one's leftovers: a build the server still runs for
//!   a process that is gone is stopped, and the lock then taken.
//! - a **build id**: a fresh id written to the table's metadata row when a build completes,
//!   cleared before an index is dropped or rebuilt; before a point is stored the backend reads
//!   it back (with the database's own check that its index still exists), and a point
//!   measured on another index, or on none, is an error and never stored.

use super::{Cell, SqlConn, TableName, meta};
use crate::{Error, Result};
use std::time::{Duration, Instant};

/// The lock's name: the qualified table, within 64 characters (the longest lock name some
/// servers accept).
fn lock_name(t: &TableName) -> String {
    let full = format!("annbench.{}.{}", t.schema, t.name);
    if full.len() <= 64 {
        return full;
    }
    format!("annbench.{:016x}", fnv1a(full.as_bytes()))
}

/// The 64-bit FNV-1a hash of `bytes` (stable across runs and builds).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// How long a busy table lock is retried before the run gives up: covers the moment a server
/// takes to notice that the previous run's process has gone.
const GRACE: Duration = Duration::from_secs(3);

/// How long the leftovers of a dead run (a build still running for a killed process) are
/// given to stop once asked.
const DEAD_RUN_GRACE: Duration = Duration::from_secs(60);

/// Take `t`'s lock on this session (again, if it holds it already). When another session
/// holds it: if that session runs a statement of an annbench process of this machine that is
/// no longer alive (a run killed with SIGKILL, or a crashed client, whose build the server
/// goes on with), stop that statement and wait for the lock ([`DEAD_RUN_GRACE`] at most);
/// otherwise fail, naming the session, after [`GRACE`].
pub fn lock_table(c: &mut dyn SqlConn, t: &TableName) -> Result<()> {
    let start = Instant::now();
    let mut limit = GRACE;
    let mut last = None;
    loop {
        if try_lock(c, t)? {
            return Ok(());
        }
        let holder = holder(c, t);
        if let Some(h) = &holder {
            if let Some(pid) = h.statement.as_deref().and_then(dead_run) {
                stop_session(c, h.session);
                limit = DEAD_RUN_GRACE;
                last = Some(pid);
            }
        }
        if start.elapsed() >= limit {
            let who = holder.map(|h| h.describe()).unwrap_or_default();
            let dead = last
                .map(|pid| format!("; it is what is left of annbench process {pid}, which has died, and it did not stop within {} s", DEAD_RUN_GRACE.as_secs()))
                .unwrap_or_default();
            return Err(Error::Backend(format!(
                "table {} is in use by another annbench run on this server{who}{dead}: two \
                 sweeps on one table would measure each other's index. Wait for it to finish, \
                 or stop it; a run that died frees the table by itself once the server closes \
                 its session",
                t.qualified(c.dialect())
            )));
        }
        // The retries are annbench's own schedule: a stop (Ctrl-C) ends them at once.
        if crate::backend::stop_requested() {
            return Err(Error::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn try_lock(c: &mut dyn SqlConn, t: &TableName) -> Result<bool> {
    let name = lock_name(t);
    let (take, args) = c.dialect().try_lock(&name);
    let got = c.first_row(&take, &args, "taking the table lock")?;
    Ok(got.and_then(|r| r.first().and_then(Cell::int)) == Some(1))
}

/// The comment annbench puts on its long statements (index builds), so that a later run can
/// tell the leftovers of a dead process: `/* annbench pid=N host=H */`.
pub fn tag() -> String {
    format!(
        "/* annbench pid={} host={} */",
        std::process::id(),
        hostname()
    )
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end])
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .collect()
}

/// The pid of the annbench process of this machine that sent `statement`, if it has died.
fn dead_run(statement: &str) -> Option<u32> {
    let rest = &statement[statement.find("/* annbench pid=")? + 16..];
    let (pid, rest) = rest.split_once(" host=")?;
    let (host, _) = rest.split_once(" */")?;
    let pid: u32 = pid.parse().ok()?;
    if host != hostname() || pid == std::process::id() {
        return None;
    }
    // SAFETY: kill with signal 0 only checks whether the process exists.
    let alive = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    (!alive).then_some(pid)
}

/// Stop the statement of another session of this user, as far as the server can do so safely
/// ([`Dialect::stop_session`](super::Dialect::stop_session)); a statement left running is asked
/// again on the next retry, or finishes and the server then closes its session.
fn stop_session(c: &mut dyn SqlConn, session: i64) {
    let _ = c.dialect().stop_session(c, session);
}

/// Release every table lock this session holds, before it closes: the server frees them with
/// the session anyway, but only once it has noticed the close, which may be after the next
/// backend of the same process asks for the same table.
pub fn unlock_all(c: &mut dyn SqlConn) {
    let sql = c.dialect().unlock_all();
    let _ = c.first_row(sql, &[], "releasing the table locks");
}

/// The session holding a table lock, as far as the server tells.
pub struct Holder {
    pub session: i64,
    host: String,
    seconds: i64,
    /// Its running statement, if any.
    pub statement: Option<String>,
}

impl Holder {
    /// ` (session N, from HOST, connected S s ago)`.
    fn describe(&self) -> String {
        format!(
            " (session {}, from {}, connected {} s ago)",
            self.session, self.host, self.seconds
        )
    }
}

/// The session holding `t`'s lock, if the server tells.
pub fn holder(c: &mut dyn SqlConn, t: &TableName) -> Option<Holder> {
    let name = lock_name(t);
    let (sql, args) = c.dialect().lock_holder(&name);
    let row = c.first_row(sql, &args, "finding the lock holder").ok()??;
    match row.as_slice() {
        [id, host, secs, statement] => Some(Holder {
            session: id.int()?,
            host: host.text().unwrap_or("?").to_string(),
            seconds: secs.int().unwrap_or(0),
            statement: statement.text().map(str::to_string),
        }),
        _ => None,
    }
}

/// Forget `t`'s build id: called before its index is dropped or rebuilt.
pub fn clear_build(c: &mut dyn SqlConn, t: &TableName) -> Result<()> {
    meta::set_build_id(c, t, None)
}

/// Record a fresh build id for the index just built on `t`, and return it.
pub fn new_build(c: &mut dyn SqlConn, t: &TableName) -> Result<String> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() % 1_000_000_000_000)
        .unwrap_or(0);
    let id = format!(
        "{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    meta::set_build_id(c, t, Some(&id))?;
    Ok(id)
}

/// Fail unless `t`'s recorded build id is still `built` (the id this backend recorded) and
/// `index_exists`: a point measured since then was measured on that index.
pub fn check_build(
    c: &mut dyn SqlConn,
    t: &TableName,
    algorithm: &str,
    built: Option<&str>,
    index_exists: bool,
) -> Result<()> {
    let Some(built) = built else {
        return Err(Error::Backend(format!(
            "{algorithm}: no index was built on {}; nothing measured is stored",
            t.qualified(c.dialect())
        )));
    };
    let now = meta::build_id(c, t)?;
    if index_exists && now.as_deref() == Some(built) {
        return Ok(());
    }
    let what = match (&now, index_exists) {
        (_, false) => "the index is gone".to_string(),
        (None, true) => "it is being rebuilt".to_string(),
        (Some(other), true) => format!("it was rebuilt (build {other}, this run built {built})"),
    };
    Err(Error::Backend(format!(
        "{algorithm}: the index on {} changed while this point was measured ({what}): \
         another session dropped or rebuilt it. The point is not stored; run one sweep per \
         table at a time",
        t.qualified(c.dialect())
    )))
}

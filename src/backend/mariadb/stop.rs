//! Stopping a running `ALTER TABLE ... ADD VECTOR INDEX` safely: on Ctrl-C or when the build
//! timeout passes, a watcher sends `KILL QUERY` from a connection of its own, but only while
//! the statement is in its row-copy phase.
//!
//! Why not `max_statement_time`, and why wait for the copy phase: on MariaDB 11.8.9 a kill
//! (by `KILL QUERY` or by `max_statement_time`) that lands while the ALTER is in its
//! "After create" state, creating the hidden index table in the first tens of milliseconds,
//! either fails with ERROR 1939 ("Engine InnoDB failed to discover table ... with 'CREATE TABLE
//! i (layer tinyint ...'") or crashes the server (signal 11 in `THD::free_tmp_table_share`).
//! Kills during "copy to tmp table", where a build spends nearly all its time, return ERROR
//! 1317 and leave the table intact. A statement seen in any other state is left to reach the
//! copy phase or to finish; the caller then treats the build as stopped all the same.

use crate::backend::{BuildWatch, Cancel};
use crate::connect::{ServerUrl, connect_mariadb};
use mysql::Conn;
use mysql::prelude::Queryable;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Why a build was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StopReason {
    /// The user asked (Ctrl-C): the build is abandoned.
    Cancelled,
    /// The build ran past its time limit.
    TimedOut,
}

/// How often the watcher checks for a stop request, and then for the copy phase.
const POLL: Duration = Duration::from_millis(20);

/// The processlist state in which a kill is safe (see the module comment).
const KILLABLE_STATE: &str = "copy to tmp table";

/// How often the watcher reads the statement's progress.
const PROGRESS_POLL: Duration = Duration::from_millis(500);

/// Run `statement` (on the connection with id `conn_id`) while a watcher polls `cancel` and
/// the `deadline`; once either asks, the watcher sends `KILL QUERY` whenever the statement is
/// in its copy phase, until it returns. Meanwhile it reports the statement's processlist state
/// and `PROGRESS` to `watch`. Returns the result and the first stop reason, if any.
pub(super) fn stoppable<T>(
    url: &ServerUrl,
    conn_id: u32,
    cancel: &Cancel<'_>,
    deadline: Option<Instant>,
    watch: &BuildWatch,
    statement: impl FnOnce() -> T,
) -> (T, Option<StopReason>) {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut killer: Option<Conn> = None;
            let mut reason = None;
            let mut last_progress: Option<Instant> = None;
            while !done.load(Ordering::Relaxed) {
                if reason.is_none() {
                    if cancel() {
                        reason = Some(StopReason::Cancelled);
                    } else if deadline.is_some_and(|d| Instant::now() >= d) {
                        reason = Some(StopReason::TimedOut);
                    }
                }
                let progress_due = last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_POLL);
                if (reason.is_some() || progress_due) && killer.is_none() {
                    killer = connect_mariadb(url).ok();
                }
                if let Some(k) = killer.as_mut() {
                    if reason.is_some() {
                        kill_if_copying(k, conn_id);
                    } else if progress_due {
                        report_progress(k, conn_id, watch);
                        last_progress = Some(Instant::now());
                    }
                }
                std::thread::sleep(POLL);
            }
            reason
        });
        let r = statement();
        done.store(true, Ordering::Relaxed);
        (r, watcher.join().unwrap_or(None))
    })
}

/// The statement's processlist state and, while it copies rows (where a vector index build
/// spends nearly all its time, inserting each row into the graph), the percentage of rows
/// copied that MariaDB reports as `PROGRESS`.
fn report_progress(conn: &mut Conn, conn_id: u32, watch: &BuildWatch) {
    let row: Option<(Option<String>, Option<f64>)> = conn
        .exec_first(
            "SELECT STATE, PROGRESS FROM information_schema.PROCESSLIST WHERE ID = ?",
            (conn_id,),
        )
        .ok()
        .flatten();
    if let Some((Some(state), progress)) = row {
        let percent = if state == KILLABLE_STATE {
            progress
        } else {
            None
        };
        watch.set(&state, percent);
    }
}

/// Send `KILL QUERY conn_id` if that connection's statement is copying rows. Errors are
/// ignored: the next poll tries again, and the caller stops the build whatever happens here.
fn kill_if_copying(killer: &mut Conn, conn_id: u32) {
    let state: Option<Option<String>> = killer
        .exec_first(
            "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = ?",
            (conn_id,),
        )
        .ok()
        .flatten();
    if state.flatten().as_deref() == Some(KILLABLE_STATE) {
        let _ = killer.query_drop(format!("KILL QUERY {conn_id}"));
    }
}

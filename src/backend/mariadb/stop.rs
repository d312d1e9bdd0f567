//! Stopping a running `ALTER TABLE ... ADD VECTOR INDEX` safely: on Ctrl-C or when the build
//! timeout passes, the shared watcher ([`crate::backend::sql::watch`]) asks this one to stop
//! the build, and it sends `KILL QUERY` from a connection of its own, but only while the
//! statement is in its row-copy phase.
//!
//! Why not `max_statement_time`, and why wait for the copy phase: on MariaDB 11.8.9 a kill
//! (by `KILL QUERY` or by `max_statement_time`) that lands while the ALTER is in its
//! "After create" state, creating the hidden index table in the first tens of milliseconds,
//! either fails with ERROR 1939 ("Engine InnoDB failed to discover table ... with 'CREATE TABLE
//! i (layer tinyint ...'") or crashes the server (signal 11 in `THD::free_tmp_table_share`).
//! Kills during "copy to tmp table", where a build spends nearly all its time, return ERROR
//! 1317 and leave the table intact. A statement seen in any other state is left to reach the
//! copy phase or to finish; the caller then treats the build as stopped all the same.

use super::server::connect;
use crate::backend::sql::watch::Watch;
use crate::connect::ServerUrl;
use mysql::Conn;
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

/// The processlist state in which a kill is safe (see the module comment).
pub const KILLABLE_STATE: &str = "copy to tmp table";

/// A processlist state and, while copying rows, the percentage copied.
type Progress = Option<(String, Option<f64>)>;

/// How often the statement's state and progress are read.
const PROGRESS_POLL: Duration = Duration::from_millis(500);

/// Kills the statement of connection `conn_id` once it is copying rows, and reports its
/// processlist state and progress.
pub(super) struct KillWhenCopying<'a> {
    pub url: &'a ServerUrl,
    pub conn_id: u32,
    /// Multiplies the server's `PROGRESS` into the percentage of rows copied (see `build`).
    pub progress_scale: f64,
    /// Opened on the first stop request or progress poll.
    pub killer: Option<Conn>,
    /// The last state and percentage read, and when.
    pub last: Option<(Instant, Progress)>,
}

impl KillWhenCopying<'_> {
    fn conn(&mut self) -> Option<&mut Conn> {
        if self.killer.is_none() {
            self.killer = connect(self.url).ok();
        }
        self.killer.as_mut()
    }
}

impl Watch for KillWhenCopying<'_> {
    /// Send `KILL QUERY conn_id` if that connection's statement is copying rows. Errors are
    /// ignored: the next poll tries again, and the caller stops the build whatever happens.
    fn stop(&mut self) {
        let conn_id = self.conn_id;
        let Some(killer) = self.conn() else {
            return;
        };
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

    /// The statement's processlist state and, while it copies rows (where a vector index
    /// build spends nearly all its time, inserting each row into the graph), the percentage
    /// of rows copied, from MariaDB's `PROGRESS` (rescaled). Read every [`PROGRESS_POLL`].
    fn progress(&mut self) -> Progress {
        if let Some((at, seen)) = &self.last {
            if at.elapsed() < PROGRESS_POLL {
                return seen.clone();
            }
        }
        let conn_id = self.conn_id;
        let row: Option<(Option<String>, Option<f64>)> = self
            .conn()?
            .exec_first(
                "SELECT STATE, PROGRESS FROM information_schema.PROCESSLIST WHERE ID = ?",
                (conn_id,),
            )
            .ok()
            .flatten();
        let seen = match row {
            Some((Some(state), progress)) if !state.is_empty() => {
                let percent = progress
                    .filter(|_| state == KILLABLE_STATE)
                    .map(|p| p * self.progress_scale);
                Some((state, percent))
            }
            _ => None,
        };
        self.last = Some((Instant::now(), seen.clone()));
        seen
    }
}

/// Kills the statement of connection `conn_id` in whatever state it is: for a stream's writes
/// (INSERT, UPDATE, DELETE), which InnoDB rolls back safely at any point, unlike an index
/// build (see the module comment).
pub(super) struct KillQuery<'a> {
    pub url: &'a ServerUrl,
    pub conn_id: u32,
    /// Opened on the first stop request.
    pub killer: Option<Conn>,
}

impl Watch for KillQuery<'_> {
    fn stop(&mut self) {
        if self.killer.is_none() {
            self.killer = connect(self.url).ok();
        }
        if let Some(killer) = self.killer.as_mut() {
            let _ = killer.query_drop(format!("KILL QUERY {}", self.conn_id));
        }
    }
}

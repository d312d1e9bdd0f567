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

/// The processlist state in which a kill is safe (see the module comment).
pub const KILLABLE_STATE: &str = "copy to tmp table";

/// Kills the statement of connection `conn_id` once it is copying rows.
pub(super) struct KillWhenCopying<'a> {
    pub url: &'a ServerUrl,
    pub conn_id: u32,
    /// Opened on the first stop request.
    pub killer: Option<Conn>,
}

impl Watch for KillWhenCopying<'_> {
    /// Send `KILL QUERY conn_id` if that connection's statement is copying rows. Errors are
    /// ignored: the next poll tries again, and the caller stops the build whatever happens.
    fn stop(&mut self) {
        if self.killer.is_none() {
            self.killer = connect(self.url).ok();
        }
        let Some(killer) = self.killer.as_mut() else {
            return;
        };
        let state: Option<Option<String>> = killer
            .exec_first(
                "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = ?",
                (self.conn_id,),
            )
            .ok()
            .flatten();
        if state.flatten().as_deref() == Some(KILLABLE_STATE) {
            let _ = killer.query_drop(format!("KILL QUERY {}", self.conn_id));
        }
    }
}

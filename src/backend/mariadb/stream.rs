//! The writes of a streaming runbook on MariaDB ([`StreamTable`]): an InnoDB table of its own,
//! `stream_mariadb_<dataset>_<hash>` (`id INT PRIMARY KEY, v VECTOR(d)`), written on a writer
//! connection of its own (in the binary character set, so vectors travel as raw bytes, as the
//! sweep's load sends them); searches on other connections see a batch once the call returns.
//!
//! - insert and replace: prepared multi-row statements with binary parameters (INSERT ...
//!   VALUES; UPDATE ... JOIN a derived table of the new vectors), up to [`STATEMENT_BYTES`] of
//!   vectors each; a batch of several statements is one transaction. The bulk protocol the
//!   sweep loads with does not report the rows each packet changed, so it is not used here.
//! - delete: one `DELETE ... WHERE id >= ? AND id < ?`.
//! - maintenance: MariaDB has no VACUUM (InnoDB purges deleted rows by itself). `OPTIMIZE
//!   TABLE` on InnoDB is "recreate + analyze": the table is copied with its indexes, so the
//!   MHNSW graph is built anew from the live rows (the index gets a new hidden table, and the
//!   backend records the new build). Reindex drops the vector index and builds it again with
//!   the last build's arguments, as a sweep's build does. Both are index builds, stopped only
//!   in their row-copy phase ([`super::stop`]).
//! - sizes: InnoDB keeps no count of deleted rows per table, so there are no dead tuples.
//!
//! A write is killed (`KILL QUERY`) on a stop request or past the timeout, and its transaction
//! rolled back: a stopped batch leaves no rows.

use super::stop::{KillQuery, KillWhenCopying};
use super::{ALGORITHM, Engine, Loaded, MariaDb, build, server, sql_err};
use crate::backend::sql::stream::{self as shared, Ran, int4_ids, int4_range};
use crate::backend::sql::{SqlConn, TableName, count_rows, guard};
use crate::backend::stream::{
    IdDigest, MaintenanceOp, MaintenanceReport, StreamTable, TableSizes, WriteReport, check_batch,
    unsupported,
};
use crate::backend::table::check_batch_values;
use crate::backend::{Backend, TableSpec};
use crate::{Error, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Value};
use ndarray::ArrayView2;
use std::time::{Duration, Instant};

/// Vector bytes per statement, well under the default 16 MiB `max_allowed_packet`.
pub const STATEMENT_BYTES: usize = 4 << 20;
/// Rows per statement at most (a statement takes at most 65,535 placeholders).
const STATEMENT_ROWS: usize = 1000;

const INSERT_METHOD: &str = "prepared multi-row INSERT (binary parameters)";
const INSERTS_METHOD: &str =
    "prepared multi-row INSERTs (binary parameters) in one transaction";
const REPLACE_METHOD: &str = "prepared UPDATE ... JOIN (binary parameters)";
const REPLACES_METHOD: &str =
    "prepared UPDATE ... JOIN statements (binary parameters) in one transaction";

/// The stream's writer connection.
pub(super) struct State {
    writer: Conn,
    /// The writer's read limit: the timeout's, reopened when the timeout changes.
    read_limit: Option<Duration>,
}

/// A writer connection whose reads end at `read_limit`.
fn writer(url: &crate::connect::ServerUrl, read_limit: Option<Duration>) -> Result<State> {
    let mut writer = server::connect_reading(url, read_limit)?;
    // As for the load: byte parameters are stored as they are, the vectors' raw bytes.
    writer.run(
        "SET SESSION character_set_client = binary",
        "preparing the stream's writer connection",
    )?;
    Ok(State { writer, read_limit })
}

impl MariaDb {
    /// The stream table of `spec`, after checking the dimension; forgets what was loaded or
    /// built before.
    fn stream_name(&mut self, spec: &TableSpec) -> Result<TableName> {
        crate::backend::check_dimension(&ALGORITHM, spec.dimension)?;
        self.loaded = None;
        self.built = None;
        self.built_args = None;
        self.stream = None;
        shared::table(&self.db, ALGORITHM.name, &spec.dataset)
    }

    /// Open the stream's writer connection on `t` (which exists) holding `rows` rows.
    fn open_stream(&mut self, spec: &TableSpec, t: TableName, rows: usize) -> Result<()> {
        let read_limit = super::admin_read_limit(self.stream_timeout);
        self.stream = Some(writer(&self.url, read_limit)?);
        self.loaded = Some(Loaded {
            spec: spec.clone(),
            rows,
            fingerprint: shared::FINGERPRINT.into(),
            engine: Engine::InnoDb,
            attrs: None,
            stream: Some(t),
        });
        Ok(())
    }

    fn stream_state(&self) -> Result<(Loaded, TableName)> {
        match (&self.stream, &self.loaded) {
            (Some(_), Some(l)) => match &l.stream {
                Some(t) => Ok((l.clone(), t.clone())),
                None => Err(not_created()),
            },
            _ => Err(not_created()),
        }
    }

    /// Run `statement` on the writer under the stream's stop and timeout; a failed or stopped
    /// one is rolled back. `what` names the statement for the timeout error.
    fn write<T>(
        &mut self,
        what: &str,
        statement: impl FnOnce(&mut Conn) -> std::result::Result<T, mysql::Error>,
    ) -> Result<(T, f64)> {
        let timeout = self.stream_timeout;
        let read_limit = super::admin_read_limit(timeout);
        if self.stream.as_ref().is_some_and(|s| s.read_limit != read_limit) {
            self.stream = Some(writer(&self.url, read_limit)?);
        }
        let Some(state) = self.stream.as_mut() else {
            return Err(not_created());
        };
        let conn_id = state.writer.connection_id();
        let writer = &mut state.writer;
        let ran: Ran<_> = shared::run(
            KillQuery {
                url: &self.url,
                conn_id,
                killer: None,
            },
            timeout,
            || statement(writer),
        );
        ran.finish(
            &shared::head(what, 120),
            timeout,
            |e| sql_err(e, &format!("running `{}`", shared::head(what, 120))),
            || writer.run("ROLLBACK", "rolling back the stopped batch"),
        )
    }

    /// Refuse values a VECTOR column cannot hold, naming the batch row.
    fn check_values(&self, what: &str, l: &Loaded, vectors: ArrayView2<'_, f32>) -> Result<()> {
        check_batch_values(what, vectors, &l.spec.dataset, f32::MAX, "")
    }

    fn set_rows(&mut self, change: impl FnOnce(usize) -> usize) {
        if let Some(l) = self.loaded.as_mut() {
            l.rows = change(l.rows);
        }
    }

    /// The vector index's size, if there is one.
    fn stream_index_bytes(&mut self, t: &TableName) -> Result<Option<u64>> {
        if build::index_identity(self, Engine::InnoDb, &t.name)?.is_none() {
            return Ok(None);
        }
        build::index_size(self, Engine::InnoDb, &t.name).map(Some)
    }

    /// `OPTIMIZE TABLE`, stopped only while it copies rows (it rebuilds the vector index).
    fn optimize(&mut self, t: &TableName) -> Result<MaintenanceReport> {
        let qt = t.qualified(self.conn.dialect());
        let before = build::index_identity(self, Engine::InnoDb, &t.name)?;
        let bytes_before = self.stream_index_bytes(t)?;
        let sql = format!("OPTIMIZE TABLE {qt}");
        let timeout = self.stream_timeout;
        let conn_id = self.conn.connection_id();
        let (url, conn) = (&self.url, &mut self.conn);
        let ran: Ran<_> = shared::run(
            KillWhenCopying {
                url,
                conn_id,
                progress_scale: 1.0,
                killer: None,
                last: None,
            },
            timeout,
            || conn.query::<(String, String, String, String), _>(&sql),
        );
        let (messages, seconds) = ran.finish(
            &sql,
            timeout,
            |e| sql_err(e, &format!("running `{sql}`")),
            || Ok(()),
        )?;
        let mut notes: Vec<String> = messages
            .into_iter()
            .map(|(_, op, kind, text)| format!("{op} {kind}: {text}"))
            .collect();
        let after = build::index_identity(self, Engine::InnoDb, &t.name)?;
        if let (Some(b), Some(a)) = (&before, &after) {
            if a != b {
                // The copy built the graph anew: that index is now the one measured.
                let metric = self.loaded()?.spec.metric;
                build::settle(self, &qt, metric)?;
                self.built = Some((guard::new_build(&mut self.conn, t)?, a.clone()));
                notes.push("the vector index was rebuilt with the table".into());
            }
        }
        let bytes_after = self.stream_index_bytes(t)?;
        notes.push(format!(
            "index bytes before: {}, after: {}",
            show(bytes_before),
            show(bytes_after)
        ));
        Ok(MaintenanceReport {
            op: sql,
            seconds,
            notes,
        })
    }

    /// Drop the vector index and build it again with the last build's arguments.
    fn reindex(&mut self, t: &TableName) -> Result<MaintenanceReport> {
        let qt = t.qualified(self.conn.dialect());
        let Some(args) = self.built_args.clone().filter(|_| self.built.is_some()) else {
            return Err(Error::Backend(format!(
                "mariadb: reindex: the stream table {qt} has no vector index built by this \
                 run; build one first"
            )));
        };
        let bytes_before = self.stream_index_bytes(t)?;
        let saved = self.build_timeout;
        self.build_timeout = self.stream_timeout;
        let t0 = Instant::now();
        let built = self.build_cancellable(&args, &crate::backend::stop_requested);
        self.build_timeout = saved;
        let built = built?;
        let mut notes = built.notices;
        notes.push(format!(
            "index bytes before: {}, after: {}",
            show(bytes_before),
            built.index_size_bytes
        ));
        Ok(MaintenanceReport {
            op: format!(
                "DROP INDEX {} ON {qt}; ALTER TABLE {qt} ADD VECTOR INDEX ({})",
                super::INDEX_NAME,
                crate::params::describe(&args)
            ),
            seconds: t0.elapsed().as_secs_f64(),
            notes,
        })
    }
}

fn show(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "no index".into(), |b| b.to_string())
}

fn not_created() -> Error {
    Error::Backend("mariadb: create_empty() must run before the stream's writes".into())
}

/// Rows per statement for `dimension`-d vectors.
fn statement_rows(dimension: usize) -> usize {
    (STATEMENT_BYTES / (dimension * 4).max(1)).clamp(1, STATEMENT_ROWS)
}

/// Row `i` of `vectors` as VECTOR bytes (little-endian f32).
fn row_bytes(vectors: ArrayView2<'_, f32>, i: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(vectors.ncols() * 4);
    for x in vectors.row(i) {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
}

/// The (id, vector bytes) parameters of rows `lo..hi`.
fn params(ids: &[i32], vectors: ArrayView2<'_, f32>, lo: usize, hi: usize) -> Vec<Value> {
    let mut params = Vec::with_capacity(2 * (hi - lo));
    for (i, &id) in (lo..hi).zip(&ids[lo..hi]) {
        params.push(Value::Int(i64::from(id)));
        params.push(Value::Bytes(row_bytes(vectors, i)));
    }
    params
}

/// Run `chunk(conn, lo, hi)` over `0..n` in pieces of `per` rows, in one transaction when
/// there is more than one piece; the rows each piece changed, summed.
fn in_pieces(
    conn: &mut Conn,
    n: usize,
    per: usize,
    mut chunk: impl FnMut(&mut Conn, usize, usize) -> std::result::Result<u64, mysql::Error>,
) -> std::result::Result<u64, mysql::Error> {
    let several = n > per;
    if several {
        conn.query_drop("START TRANSACTION")?;
    }
    let mut rows = 0;
    for lo in (0..n).step_by(per.max(1)) {
        rows += chunk(conn, lo, (lo + per).min(n))?;
    }
    if several {
        conn.query_drop("COMMIT")?;
    }
    Ok(rows)
}

impl StreamTable for MariaDb {
    fn create_empty(&mut self, spec: &TableSpec) -> Result<()> {
        let t = self.stream_name(spec)?;
        guard::lock_table(&mut self.conn, &t)?;
        let qt = t.qualified(self.conn.dialect());
        let create = format!(
            "CREATE TABLE {qt} (id INT NOT NULL PRIMARY KEY, v VECTOR({}) NOT NULL) \
             ENGINE=InnoDB",
            spec.dimension
        );
        shared::recreate(&mut self.conn, &t, &create, spec)?;
        self.open_stream(spec, t, 0)
    }

    fn progress(&mut self, spec: &TableSpec) -> Result<Option<String>> {
        let t = shared::table(&self.db, ALGORITHM.name, &spec.dataset)?;
        shared::progress(&mut self.conn, &t)
    }

    fn set_progress(&mut self, marker: &str) -> Result<()> {
        let (l, t) = self.stream_state()?;
        shared::set_progress(&mut self.conn, &t, marker, l.rows as u64)
    }

    fn reopen(&mut self, spec: &TableSpec, build_args: Option<&crate::params::Params>) -> Result<()> {
        let t = self.stream_name(spec)?;
        guard::lock_table(&mut self.conn, &t)?;
        let rows = count_rows(&mut self.conn, &t)?;
        self.open_stream(spec, t.clone(), rows as usize)?;
        if let Some(args) = build_args {
            let id = crate::backend::sql::meta::build_id(&mut self.conn, &t)?;
            let identity = build::index_identity(self, Engine::InnoDb, &t.name)?;
            match (id, identity) {
                (Some(id), Some(identity)) => {
                    self.built = Some((id, identity));
                    self.built_args = Some(args.clone());
                }
                _ => {
                    return Err(Error::Backend(format!(
                        "mariadb: the stream table {} has no complete index build to resume on",
                        t.qualified(self.conn.dialect())
                    )));
                }
            }
        }
        Ok(())
    }

    fn set_timeout(&mut self, limit: Option<Duration>) {
        self.stream_timeout = limit;
    }

    fn insert(&mut self, ids: &[i64], vectors: ArrayView2<'_, f32>) -> Result<WriteReport> {
        let (l, t) = self.stream_state()?;
        check_batch("insert", ids, vectors, l.spec.dimension)?;
        self.check_values("insert batch", &l, vectors)?;
        let ids = int4_ids("insert", ids)?;
        let qt = t.qualified(self.conn.dialect());
        let per = statement_rows(l.spec.dimension);
        let what = format!("INSERT INTO {qt} (id, v) VALUES (?, ?), ...");
        let (rows, seconds) = self.write(&what, |c| {
            in_pieces(c, ids.len(), per, |c, lo, hi| {
                let marks = vec!["(?, ?)"; hi - lo].join(",");
                let stmt = c.prep(format!("INSERT INTO {qt} (id, v) VALUES {marks}"))?;
                c.exec_drop(&stmt, params(&ids, vectors, lo, hi))?;
                Ok(c.affected_rows())
            })
        })?;
        self.set_rows(|n| n + rows as usize);
        Ok(WriteReport {
            rows,
            seconds,
            method: if ids.len() > per {
                INSERTS_METHOD
            } else {
                INSERT_METHOD
            },
        })
    }

    fn delete(&mut self, start: i64, end: i64) -> Result<WriteReport> {
        let (_, t) = self.stream_state()?;
        let (lo, hi) = int4_range(start, end)?;
        let qt = t.qualified(self.conn.dialect());
        let sql = format!("DELETE FROM {qt} WHERE id >= ? AND id < ?");
        let what = format!("DELETE FROM {qt} WHERE id >= {start} AND id < {end}");
        let (rows, seconds) = self.write(&what, |c| {
            c.exec_drop(&sql, (lo, hi))?;
            Ok(c.affected_rows())
        })?;
        self.set_rows(|n| n.saturating_sub(rows as usize));
        Ok(WriteReport {
            rows,
            seconds,
            method: "DELETE ... WHERE id range",
        })
    }

    fn replace(&mut self, ids: &[i64], vectors: ArrayView2<'_, f32>) -> Result<WriteReport> {
        let (l, t) = self.stream_state()?;
        check_batch("replace", ids, vectors, l.spec.dimension)?;
        self.check_values("replace batch", &l, vectors)?;
        let ids = int4_ids("replace", ids)?;
        let qt = t.qualified(self.conn.dialect());
        let per = statement_rows(l.spec.dimension);
        let what = format!("UPDATE {qt} AS t JOIN (SELECT ? AS id, ? AS v UNION ALL ...) ...");
        let (rows, seconds) = self.write(&what, |c| {
            in_pieces(c, ids.len(), per, |c, lo, hi| {
                let rest = " UNION ALL SELECT ?, ?".repeat(hi - lo - 1);
                let stmt = c.prep(format!(
                    "UPDATE {qt} AS t JOIN (SELECT ? AS id, ? AS v{rest}) AS u ON t.id = u.id \
                     SET t.v = u.v"
                ))?;
                c.exec_drop(&stmt, params(&ids, vectors, lo, hi))?;
                Ok(c.affected_rows())
            })
        })?;
        Ok(WriteReport {
            rows,
            seconds,
            method: if ids.len() > per {
                REPLACES_METHOD
            } else {
                REPLACE_METHOD
            },
        })
    }

    fn maintenance(&mut self, op: MaintenanceOp) -> Result<MaintenanceReport> {
        let (_, t) = self.stream_state()?;
        match op {
            MaintenanceOp::Optimize => self.optimize(&t),
            MaintenanceOp::Reindex => self.reindex(&t),
            MaintenanceOp::Vacuum => Err(unsupported(
                ALGORITHM.name,
                op,
                crate::connect::ServerKind::MariaDb.decl().stream_maintenance,
            )),
        }
    }

    fn sizes(&mut self) -> Result<TableSizes> {
        let (_, t) = self.stream_state()?;
        let rows = count_rows(&mut self.conn, &t)?;
        let table_bytes = self
            .tablespace_size(&format!("{}/{}", self.db, t.name))
            .ok();
        Ok(TableSizes {
            rows,
            table_bytes,
            index_bytes: self.stream_index_bytes(&t)?,
            dead_tuples: None,
        })
    }

    fn id_digest(&mut self) -> Result<IdDigest> {
        let (_, t) = self.stream_state()?;
        shared::id_digest(&mut self.conn, &t)
    }

    fn ids_in(&mut self, start: i64, end: i64) -> Result<Vec<i64>> {
        let (_, t) = self.stream_state()?;
        shared::ids_in(&mut self.conn, &t, start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_stay_within_the_packet_and_placeholder_limits() {
        assert_eq!(statement_rows(128), STATEMENT_ROWS);
        let wide = statement_rows(16382);
        assert!(wide >= 1 && wide * 16382 * 4 <= STATEMENT_BYTES, "{wide}");
        let m = ndarray::arr2(&[[1.0f32, -2.0]]);
        assert_eq!(row_bytes(m.view(), 0), [0, 0, 128, 63, 0, 0, 0, 192]);
    }
}

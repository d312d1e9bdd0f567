//! The writes of a streaming runbook on PostgreSQL ([`StreamTable`]), for every pgvector
//! algorithm: its own table `stream_<algorithm>_<dataset>_<hash>` (`id int4 PRIMARY KEY, v`
//! of the algorithm's column type), written on the admin connection, each batch one
//! statement in autocommit, so committed when the call returns.
//!
//! - insert: up to [`INSERT_MAX_ROWS`] rows one prepared `INSERT ... SELECT FROM unnest($1,
//!   $2)` (ids and vectors as two binary arrays: one statement text for every batch size),
//!   larger batches `COPY ... FROM STDIN (FORMAT BINARY)`, the sweep's load path;
//! - replace: one `UPDATE ... FROM unnest($1, $2)`; delete: one `DELETE ... WHERE id >= $1
//!   AND id < $2`;
//! - maintenance: `VACUUM` (without ANALYZE: the step measures the cleanup of dead tuples in
//!   the table and the vector index, which pgvector repairs; the query sessions run with
//!   `enable_seqscan = off`, so statistics do not change their plans) and `REINDEX INDEX`
//!   (the index rebuilt from the rows now in the table; IVFFlat recomputes its lists). Queries
//!   on other connections wait for REINDEX: it locks the index.
//! - sizes: the writes' statistics are flushed first (`pg_stat_force_next_flush()`,
//!   PostgreSQL 15+, then read in the next statement), so the dead tuples count every write
//!   so far; on older servers the count lags by up to the statistics collector's interval
//!   (about 0.5 s).
//!
//! Every statement is stopped by `pg_cancel_backend` from a connection of its own on a stop
//! request or past the timeout ([`crate::backend::sql::stream`]); the watchdog bounds the
//! wait for a server that stops answering.

use super::Loaded;
use super::errors::pg_err;
use super::search::VecParam;
use super::server::connect_watched;
use super::{Column, PgBackend, watchdog};
use crate::backend::TableSpec;
use crate::backend::sql::stream::{self as shared, Ran, int4_ids, int4_range};
use crate::backend::sql::{SqlConn, TableName, guard, watch::Watch};
use crate::backend::stream::{
    IdDigest, MaintenanceOp, MaintenanceReport, StreamTable, TableSizes, WriteReport, check_batch,
    unsupported,
};
use crate::backend::table::{check_batch_values, check_ident};
use crate::connect::{ServerKind, ServerUrl};
use crate::params::Params;
use crate::{Error, Result};
use ndarray::ArrayView2;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::{Client, Statement};
use std::borrow::Cow;
use std::time::Duration;

/// Largest batch sent as one `INSERT ... unnest`; larger ones go by binary COPY, whose
/// stream of rows has no array to build on either side.
pub const INSERT_MAX_ROWS: usize = 256;

/// How many rows a COPY sends between two looks at a stop request.
const COPY_STOP_ROWS: usize = 1024;

const INSERT_METHOD: &str = "INSERT ... SELECT FROM unnest (binary arrays)";
const COPY_METHOD: &str = "COPY BINARY";

/// The stream table's prepared statements and settings (reset by every create_empty).
pub(super) struct State {
    /// The admin session's backend pid, for `pg_cancel_backend`.
    pid: i32,
    /// The `v` column's type (`vector` or `halfvec`), for binary COPY.
    column: Type,
    insert: Statement,
    replace: Statement,
    delete: Statement,
}

/// Cancels the admin session's statement from a connection of its own, opened on the first
/// stop request.
struct Cancel<'a> {
    url: &'a ServerUrl,
    pid: i32,
    client: Option<(Client, Option<watchdog::Conn>)>,
}

impl Watch for Cancel<'_> {
    fn stop(&mut self) {
        if self.client.is_none() {
            self.client = connect_watched(self.url).ok();
        }
        if let Some((client, conn)) = self.client.as_mut() {
            let _bound = watchdog::arm(*conn, watchdog::WATCH_LIMIT);
            let _ = client.execute("SELECT pg_cancel_backend($1)", &[&self.pid]);
        }
    }
}

impl PgBackend {
    /// The stream table of `spec` and its index's name, after checking the dimension; forgets
    /// what was loaded or built before.
    fn stream_names(&mut self, spec: &TableSpec) -> Result<(TableName, String)> {
        let algo = self.index.algorithm();
        crate::backend::check_dimension(algo, spec.dimension)?;
        self.loaded = None;
        self.built = None;
        self.stream = None;
        let table = shared::table(&self.schema, algo.name, &spec.dataset)?;
        let index = format!("{}_vidx", table.name);
        check_ident(&index, "index name")?;
        Ok((table, index))
    }

    /// Prepare the stream's statements on `table` (which exists) holding `rows` rows.
    fn open_stream(
        &mut self,
        spec: &TableSpec,
        table: TableName,
        index: String,
        rows: usize,
    ) -> Result<()> {
        let qt = self.qualified(&table);
        let column: Column = self.index.column();
        let vtype = format!("{}[]", column.sql(spec.dimension));
        let prepare = |c: &mut Client, sql: &str| {
            c.prepare(sql)
                .map_err(|e| pg_err(e, "preparing the stream's statements"))
        };
        let c = &mut self.client;
        let state = State {
            pid: c
                .query_one("SELECT pg_backend_pid()", &[])
                .map_err(|e| pg_err(e, "reading the backend pid"))?
                .get(0),
            column: super::load::column_type(c, &qt)?,
            insert: prepare(
                c,
                &format!("INSERT INTO {qt} (id, v) SELECT * FROM unnest($1::int4[], $2::{vtype})"),
            )?,
            replace: prepare(
                c,
                &format!(
                    "UPDATE {qt} AS t SET v = u.v FROM unnest($1::int4[], $2::{vtype}) AS u(id, v) \
                     WHERE t.id = u.id"
                ),
            )?,
            delete: prepare(c, &format!("DELETE FROM {qt} WHERE id >= $1 AND id < $2"))?,
        };
        self.drain_notices();
        self.stream = Some(state);
        self.loaded = Some(Loaded {
            spec: spec.clone(),
            rows,
            table,
            index,
            attrs: None,
        });
        Ok(())
    }

    fn stream_state(&self) -> Result<(&State, Loaded)> {
        match (&self.stream, &self.loaded) {
            (Some(s), Some(l)) => Ok((s, l.clone())),
            _ => Err(Error::Backend(format!(
                "{}: create_empty() must run before the stream's writes",
                self.index.algorithm().name
            ))),
        }
    }

    /// Run `statement` on the admin connection under the stream's stop and timeout; `what` is
    /// the statement's text for the errors. A failed statement of autocommit rolls itself back.
    fn watched<T>(
        &mut self,
        what: &str,
        statement: impl FnOnce(&mut Client) -> std::result::Result<T, postgres::Error>,
    ) -> Result<(T, f64)> {
        let timeout = self.stream_timeout;
        let pid = self.stream_state()?.0.pid;
        let conn = self.conn;
        let (client, url) = (&mut self.client, &self.url);
        let ran: Ran<_> = shared::run(
            Cancel {
                url,
                pid,
                client: None,
            },
            timeout,
            || {
                // A server that stops answering acts on no cancel: past the timeout and some
                // slack, the client closes the connection itself.
                let _bound = timeout.map(|t| watchdog::arm(conn, t + watchdog::BUILD_SLACK));
                statement(client)
            },
        );
        let done = ran.finish(
            &shared::head(what, 120),
            timeout,
            |e| watchdog::pg_err(conn, e, &format!("running `{}`", shared::head(what, 120))),
            || Ok(()),
        );
        self.drain_notices();
        done
    }

    /// Refuse values the column or the index cannot hold, naming the batch row.
    fn check_values(&self, what: &str, l: &Loaded, vectors: ArrayView2<'_, f32>) -> Result<()> {
        let (max_abs, limit) = match self.index.float16_limit() {
            Some(limit) => (half::f16::MAX.to_f32(), limit),
            None => (f32::MAX, ""),
        };
        check_batch_values(what, vectors, &l.spec.dataset, max_abs, limit)
    }

    fn set_rows(&mut self, change: impl FnOnce(usize) -> usize) {
        if let Some(l) = self.loaded.as_mut() {
            l.rows = change(l.rows);
        }
    }

    /// The index's size in bytes, if it exists.
    fn index_bytes(&mut self, l: &Loaded) -> Result<Option<u64>> {
        let _bound = watchdog::arm(self.conn, watchdog::QUERY_LIMIT);
        let row = self
            .client
            .query_one(
                "SELECT pg_relation_size(to_regclass($1::text))::int8",
                &[&format!("{}.{}", self.schema, l.index)],
            )
            .map_err(|e| watchdog::pg_err(self.conn, e, "reading the index size"))?;
        Ok(row.get::<_, Option<i64>>(0).map(|n| n as u64))
    }

    /// The table's dead tuples, with this session's writes counted (see the module comment).
    fn dead_tuples(&mut self, qt: &str) -> Result<u64> {
        let _bound = watchdog::arm(self.conn, watchdog::QUERY_LIMIT);
        // PostgreSQL 15+; on older servers the error is harmless and the count lags.
        let _ = self
            .client
            .batch_execute("SELECT pg_stat_force_next_flush()");
        let row = self
            .client
            .query_one(
                "SELECT pg_stat_get_dead_tuples($1::text::regclass)::int8",
                &[&qt],
            )
            .map_err(|e| watchdog::pg_err(self.conn, e, "reading the dead tuples"))?;
        Ok(row.get::<_, Option<i64>>(0).unwrap_or(0) as u64)
    }

    fn qualified(&self, t: &TableName) -> String {
        t.qualified(self.client.dialect())
    }
}

/// The values of `vectors` row after row, borrowed when they already lie so.
fn row_major<'a>(vectors: ArrayView2<'a, f32>) -> Cow<'a, [f32]> {
    match vectors.to_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(vectors.iter().copied().collect()),
    }
}

impl StreamTable for PgBackend {
    fn create_empty(&mut self, spec: &TableSpec) -> Result<()> {
        let (table, index) = self.stream_names(spec)?;
        guard::lock_table(&mut self.client, &table)?;
        let qt = self.qualified(&table);
        let column: Column = self.index.column();
        let create = format!(
            "CREATE TABLE {qt} (id int4 NOT NULL PRIMARY KEY, v {} NOT NULL);
             ALTER TABLE {qt} ALTER COLUMN v SET STORAGE {};",
            column.sql(spec.dimension),
            column.storage(spec.dimension)
        );
        shared::recreate(&mut self.client, &table, &create, spec)?;
        self.open_stream(spec, table, index, 0)
    }

    fn progress(&mut self, spec: &TableSpec) -> Result<Option<String>> {
        let (table, _) = self.stream_names(spec)?;
        shared::progress(&mut self.client, &table)
    }

    fn set_progress(&mut self, marker: &str) -> Result<()> {
        let (_, l) = self.stream_state()?;
        shared::set_progress(&mut self.client, &l.table, marker, l.rows as u64)
    }

    fn reopen(&mut self, spec: &TableSpec, build_args: Option<&Params>) -> Result<()> {
        let (table, index) = self.stream_names(spec)?;
        guard::lock_table(&mut self.client, &table)?;
        let qt = self.qualified(&table);
        let rows: i64 = self
            .client
            .query_one(&format!("SELECT count(*)::int8 FROM {qt}"), &[])
            .map_err(|e| pg_err(e, "counting the stream table's rows"))?
            .get(0);
        self.open_stream(spec, table.clone(), index.clone(), rows as usize)?;
        if build_args.is_some() {
            let id = crate::backend::sql::meta::build_id(&mut self.client, &table)?;
            let oid = super::index_oid(&mut self.client, &self.schema, &index)?;
            match (id, oid) {
                (Some(id), Some(oid)) => self.built = Some((id, oid)),
                _ => {
                    return Err(Error::Backend(format!(
                        "{}: the stream table {qt} has no complete index build to resume on",
                        self.index.algorithm().name
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
        let (state, l) = self.stream_state()?;
        check_batch("insert", ids, vectors, l.spec.dimension)?;
        self.check_values("insert batch", &l, vectors)?;
        let int4 = int4_ids("insert", ids)?;
        let data = row_major(vectors);
        let slices: Vec<&[f32]> = data.chunks_exact(l.spec.dimension.max(1)).collect();
        let qt = self.qualified(&l.table);
        let (insert, column) = (state.insert.clone(), state.column.clone());
        let ((done, method), seconds) = if ids.len() <= INSERT_MAX_ROWS {
            let params: Vec<VecParam<'_>> = slices.iter().map(|v| VecParam(v)).collect();
            let sql = format!("INSERT INTO {qt} (id, v) SELECT * FROM unnest($1, $2)");
            self.watched(&sql, |c| {
                c.execute(&insert, &[&int4, &params])
                    .map(|n| (Some(n), INSERT_METHOD))
            })?
        } else {
            let sql = format!("COPY {qt} (id, v) FROM STDIN WITH (FORMAT BINARY)");
            self.watched(&sql, |c| {
                let w = c.copy_in(&sql)?;
                let mut w = BinaryCopyInWriter::new(w, &[Type::INT4, column]);
                for (i, (id, v)) in int4.iter().zip(&slices).enumerate() {
                    // The server's cancel ends the COPY only once the client stops sending:
                    // on a stop, the writer is dropped unfinished, which aborts the COPY.
                    if i % COPY_STOP_ROWS == 0 && crate::backend::stop_requested() {
                        return Ok((None, COPY_METHOD));
                    }
                    w.write(&[id, &VecParam(v)])?;
                }
                w.finish().map(|n| (Some(n), COPY_METHOD))
            })?
        };
        let Some(rows) = done else {
            return Err(Error::Interrupted);
        };
        self.set_rows(|n| n + rows as usize);
        Ok(WriteReport {
            rows,
            seconds,
            method,
        })
    }

    fn delete(&mut self, start: i64, end: i64) -> Result<WriteReport> {
        let (state, l) = self.stream_state()?;
        let (lo, hi) = int4_range(start, end)?;
        let delete = state.delete.clone();
        let sql = format!(
            "DELETE FROM {} WHERE id >= {start} AND id < {end}",
            self.qualified(&l.table)
        );
        let (rows, seconds) = self.watched(&sql, |c| c.execute(&delete, &[&lo, &hi]))?;
        self.set_rows(|n| n.saturating_sub(rows as usize));
        Ok(WriteReport {
            rows,
            seconds,
            method: "DELETE ... WHERE id range",
        })
    }

    fn replace(&mut self, ids: &[i64], vectors: ArrayView2<'_, f32>) -> Result<WriteReport> {
        let (state, l) = self.stream_state()?;
        check_batch("replace", ids, vectors, l.spec.dimension)?;
        self.check_values("replace batch", &l, vectors)?;
        let int4 = int4_ids("replace", ids)?;
        let data = row_major(vectors);
        let params: Vec<VecParam<'_>> = data
            .chunks_exact(l.spec.dimension.max(1))
            .map(VecParam)
            .collect();
        let replace = state.replace.clone();
        let sql = format!(
            "UPDATE {} AS t SET v = u.v FROM unnest($1, $2) AS u(id, v) WHERE t.id = u.id",
            self.qualified(&l.table)
        );
        let (rows, seconds) = self.watched(&sql, |c| c.execute(&replace, &[&int4, &params]))?;
        Ok(WriteReport {
            rows,
            seconds,
            method: "UPDATE ... FROM unnest (binary arrays)",
        })
    }

    fn maintenance(&mut self, op: MaintenanceOp) -> Result<MaintenanceReport> {
        let (_, l) = self.stream_state()?;
        let name = self.index.algorithm().name;
        let qt = self.qualified(&l.table);
        let mut notes = Vec::new();
        let sql = match op {
            MaintenanceOp::Vacuum => {
                notes.push(format!("dead tuples before: {}", self.dead_tuples(&qt)?));
                format!("VACUUM {qt}")
            }
            MaintenanceOp::Reindex => {
                let Some(bytes) = self.index_bytes(&l)? else {
                    return Err(Error::Backend(format!(
                        "{name}: reindex: the stream table {qt} has no vector index; build \
                         one first"
                    )));
                };
                notes.push(format!("index bytes before: {bytes}"));
                format!("REINDEX INDEX {}.{}", self.schema, l.index)
            }
            MaintenanceOp::Optimize => {
                return Err(unsupported(
                    name,
                    op,
                    ServerKind::Postgres.decl().stream_maintenance,
                ));
            }
        };
        self.drain_notices();
        let run = sql.clone();
        let ((), seconds) = self.watched(&sql, |c| c.batch_execute(&run))?;
        notes.extend(self.drain_notices());
        match op {
            MaintenanceOp::Vacuum => {
                notes.push(format!("dead tuples after: {}", self.dead_tuples(&qt)?));
            }
            _ => {
                let after = self.index_bytes(&l)?.unwrap_or(0);
                notes.push(format!("index bytes after: {after}"));
            }
        }
        Ok(MaintenanceReport {
            op: sql,
            seconds,
            notes,
        })
    }

    fn sizes(&mut self) -> Result<TableSizes> {
        let (_, l) = self.stream_state()?;
        let qt = self.qualified(&l.table);
        let dead = self.dead_tuples(&qt)?;
        let index_bytes = self.index_bytes(&l)?;
        let _bound = watchdog::arm(self.conn, watchdog::QUERY_LIMIT);
        let row = self
            .client
            .query_one(
                &format!("SELECT count(*)::int8, pg_table_size('{qt}')::int8 FROM {qt}"),
                &[],
            )
            .map_err(|e| watchdog::pg_err(self.conn, e, "counting the stream table's rows"))?;
        Ok(TableSizes {
            rows: row.get::<_, i64>(0) as u64,
            table_bytes: row.get::<_, Option<i64>>(1).map(|n| n as u64),
            index_bytes,
            dead_tuples: Some(dead),
        })
    }

    fn id_digest(&mut self) -> Result<IdDigest> {
        let (_, l) = self.stream_state()?;
        let _bound = watchdog::arm(self.conn, watchdog::QUERY_LIMIT);
        shared::id_digest(&mut self.client, &l.table)
    }

    fn ids_in(&mut self, start: i64, end: i64) -> Result<Vec<i64>> {
        let (_, l) = self.stream_state()?;
        let _bound = watchdog::arm(self.conn, watchdog::QUERY_LIMIT);
        shared::ids_in(&mut self.client, &l.table, start, end)
    }
}

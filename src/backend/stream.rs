//! The writes of a streaming runbook (`annbench stream`, big-ann-benchmarks' streaming track):
//! the database side the executor calls between and during searches. Each SQL database
//! implements [`StreamTable`] in its own folder (`mariadb/stream.rs`, `postgres/stream.rs`) on
//! a table of its own, created empty ([`StreamTable::create_empty`]) and never the table a
//! sweep loads for the same dataset; the statements run bounded and stoppable as the sweep's
//! builds do ([`crate::backend::sql::stream`]). Other backends refuse
//! ([`crate::backend::Backend::stream_table`]'s default). When the index is built on the empty
//! table is each algorithm's declaration ([`StreamBuild`]). What each database does, and
//! what was measured of it: `docs/stream-writes.md`.

use super::TableSpec;
use crate::Result;
use ndarray::ArrayView2;
use std::time::Duration;

pub use crate::registry::{MaintenanceOp, StreamBuild};

/// One batch's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteReport {
    /// Rows the server says the statement(s) changed: inserted, deleted or updated (MariaDB
    /// counts only the rows whose vector changed).
    pub rows: u64,
    /// Wall seconds of the batch's statements (and commit), measured on the client.
    pub seconds: f64,
    /// How the rows were sent, e.g. `COPY BINARY`.
    pub method: &'static str,
}

/// `a, b, c`: the names of `ops`.
pub fn names(ops: &[MaintenanceOp]) -> String {
    ops.iter()
        .map(|op| op.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The error for `op` on a database that has only `supported`.
pub fn unsupported(
    algorithm: &str,
    op: MaintenanceOp,
    supported: &[MaintenanceOp],
) -> crate::Error {
    crate::Error::Config(format!(
        "{algorithm} has no '{}' maintenance operation: it runs {} (change the runbook's \
         maintenance step)",
        op.name(),
        names(supported)
    ))
}

/// One maintenance operation's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceReport {
    /// The statement run, e.g. `VACUUM annbench.stream_x`.
    pub op: String,
    /// Wall seconds of the statement, measured on the client.
    pub seconds: f64,
    /// What the server said (notices, OPTIMIZE's messages) and what changed (dead tuples,
    /// index size before and after).
    pub notes: Vec<String>,
}

/// What the stream table holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSizes {
    /// Live rows (`COUNT(*)`: exact, a full count on every call).
    pub rows: u64,
    /// The table's size on the server in bytes, without the vector index, if known.
    pub table_bytes: Option<u64>,
    /// The vector index's size in bytes; `None` without an index (or where unknown).
    pub index_bytes: Option<u64>,
    /// Dead row versions not yet vacuumed (PostgreSQL); `None` where the server does not count
    /// them per table (MariaDB).
    pub dead_tuples: Option<u64>,
}

/// A cheap digest of a set of row ids: the count, the smallest and largest, the sum and a sum
/// of products of two residues. It tells the rows a stream table holds from the rows a run's
/// live set says it holds without reading them: a resume checks it
/// ([`StreamTable::id_digest`]); rows deleted, added or renumbered behind the run's back
/// change it (any change of the count, or of one id, changes the count or the sum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IdDigest {
    pub count: u64,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub sum: i128,
    pub mix: i128,
}

/// The residues whose product [`IdDigest::mix`] sums: primes, so that products stay below
/// 2^20 and a sum over 2^31 rows fits the servers' 64-bit sums.
pub const DIGEST_PRIMES: (i64, i64) = (1009, 1013);

impl IdDigest {
    /// The digest of `ids` (each once), as the servers compute it.
    pub fn of(ids: impl IntoIterator<Item = i64>) -> IdDigest {
        let (p, q) = DIGEST_PRIMES;
        let mut d = IdDigest::default();
        for id in ids {
            d.count += 1;
            d.min = Some(d.min.map_or(id, |m| m.min(id)));
            d.max = Some(d.max.map_or(id, |m| m.max(id)));
            d.sum += i128::from(id);
            // SQL's `%` keeps the dividend's sign, as Rust's does.
            d.mix += i128::from((id % p) * (id % q));
        }
        d
    }

    /// `N rows (ids A to B)`, or `no rows`.
    pub fn describe(&self) -> String {
        match (self.min, self.max) {
            (Some(a), Some(b)) => format!("{} rows (ids {a} to {b})", self.count),
            _ => "no rows".into(),
        }
    }
}

/// The writes of a streaming runbook on the backend's stream table.
pub trait StreamTable {
    /// Drop this algorithm's stream table for `spec` and create it EMPTY; afterwards build(),
    /// searcher(), verify_index_used(), check_index(), drop_index() of the Backend work on it.
    /// Its name differs from the table the sweep loads for the same dataset (the sweep's table
    /// is never touched by a stream).
    fn create_empty(&mut self, spec: &TableSpec) -> Result<()>;

    /// The progress marker the stream table of `spec` records ([`set_progress`](
    /// StreamTable::set_progress)), `None` when it has none or does not exist: a rerun resumes
    /// on the table only when this is the marker of the run's last stored step.
    fn progress(&mut self, spec: &TableSpec) -> Result<Option<String>>;

    /// Record `marker` as the table's progress, once a step's writes are committed.
    fn set_progress(&mut self, marker: &str) -> Result<()>;

    /// Open the existing stream table of `spec` as it is, to resume a run on it; with
    /// `build_args`, the vector index on it is adopted as this run's build (as if the last
    /// build() had made it: check_index passes for it, and only for it).
    fn reopen(
        &mut self,
        spec: &TableSpec,
        build_args: Option<&crate::params::Params>,
    ) -> Result<()>;

    /// The longest one write or maintenance statement may take; past it the server is asked
    /// to stop it and the call fails naming the statement. `None`: no limit. Default: the
    /// backend's `--timeout` ([`crate::backend::BackendOptions::build_timeout`]).
    fn set_timeout(&mut self, limit: Option<Duration>);

    /// Insert one batch (one statement or one transaction): rows `ids[i]` with
    /// `vectors.row(i)`, committed when the call returns; the fastest path for the batch's
    /// size. Refuses a wrong dimension or a value the column or index cannot hold, naming the
    /// batch row, before anything is sent. A stop ([`crate::backend::request_stop`]) or the
    /// timeout rolls the whole batch back.
    fn insert(&mut self, ids: &[i64], vectors: ArrayView2<'_, f32>) -> Result<WriteReport>;

    /// Delete the rows with id in [start, end), committed when the call returns.
    fn delete(&mut self, start: i64, end: i64) -> Result<WriteReport>;

    /// Give rows `ids[i]` the vector `vectors.row(i)` (UPDATE), committed when the call
    /// returns; ids not in the table are left out (and not counted).
    fn replace(&mut self, ids: &[i64], vectors: ArrayView2<'_, f32>) -> Result<WriteReport>;

    /// Run one maintenance operation, timed; one the database has not is refused with the
    /// list of those it has.
    fn maintenance(&mut self, op: MaintenanceOp) -> Result<MaintenanceReport>;

    /// Rows, table and index size, dead tuples, with the writes so far counted.
    fn sizes(&mut self) -> Result<TableSizes>;

    /// The [`IdDigest`] of the rows the stream table holds now (one aggregate query).
    fn id_digest(&mut self) -> Result<IdDigest>;

    /// The ids the stream table holds in `[start, end)`, ascending: what a stopped write step
    /// left there.
    fn ids_in(&mut self, start: i64, end: i64) -> Result<Vec<i64>>;
}

/// The error of a backend without streaming runbooks.
pub fn not_streaming(algorithm: &str) -> crate::Error {
    crate::Error::Config(format!(
        "{algorithm} does not run streaming runbooks (annbench stream): use {}",
        streaming().join(", ")
    ))
}

/// The algorithms that run streaming runbooks (their declarations give a
/// [`StreamBuild`]), in registry order.
pub fn streaming() -> Vec<&'static str> {
    crate::registry::algorithms()
        .iter()
        .filter(|a| a.stream_build.is_some())
        .map(|a| a.name)
        .collect()
}

/// Check a batch of `ids` and `vectors` against each other and the table's `dimension`:
/// as many ids as rows, rows of the table's dimension. `what` names the batch (`insert`).
pub fn check_batch(
    what: &str,
    ids: &[i64],
    vectors: ArrayView2<'_, f32>,
    dimension: usize,
) -> Result<()> {
    if ids.len() != vectors.nrows() {
        return Err(crate::Error::Config(format!(
            "{what} batch: {} ids for {} vectors; give one id per vector row",
            ids.len(),
            vectors.nrows()
        )));
    }
    if vectors.ncols() != dimension {
        return Err(crate::Error::Dataset(format!(
            "{what} batch: its vectors have {} dimensions but the stream table has {dimension} \
             (nothing was sent to the server)",
            vectors.ncols()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maintenance_names_round_trip_and_unknown_ones_list_the_known() {
        for op in MaintenanceOp::ALL {
            assert_eq!(MaintenanceOp::parse(&op.name().to_uppercase()).unwrap(), op);
        }
        let e = MaintenanceOp::parse("compact").unwrap_err().to_string();
        assert!(
            e.contains("'compact'") && e.contains("vacuum, reindex, optimize"),
            "{e}"
        );
        let e = unsupported("mariadb", MaintenanceOp::Vacuum, &[MaintenanceOp::Optimize]);
        assert!(e.to_string().contains("no 'vacuum'") && e.to_string().contains("runs optimize"));
    }

    #[test]
    fn the_refusal_names_the_streaming_algorithms() {
        let e = not_streaming("exact").to_string();
        assert!(
            e.starts_with("exact does not run streaming runbooks"),
            "{e}"
        );
        assert!(e.contains("mariadb, pgvector"), "{e}");
        assert!(!e.contains("use exact"), "{e}");
    }

    #[test]
    fn only_ivfflat_needs_rows_before_its_build() {
        for a in crate::registry::algorithms() {
            let after = a.stream_build == Some(StreamBuild::AfterFirstInsert);
            assert_eq!(after, a.name == "pgvector_ivfflat", "{}", a.name);
        }
    }

    #[test]
    fn a_batch_must_match_its_ids_and_the_dimension() {
        let m = ndarray::Array2::<f32>::zeros((2, 3));
        assert!(check_batch("insert", &[1, 2], m.view(), 3).is_ok());
        let e = check_batch("insert", &[1], m.view(), 3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 ids for 2 vectors"), "{e}");
        let e = check_batch("replace", &[1, 2], m.view(), 4)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("replace batch") && e.contains("3 dimensions"),
            "{e}"
        );
    }
}

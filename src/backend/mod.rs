//! One small trait per role, one file per database. Build arguments are set once per index;
//! query arguments many times per index (ann-benchmarks' split).
//!
//! - [`Backend`] owns the admin connection: load the table once, (re)build the index per
//!   build point, verify the query plan, report sizes and server settings.
//! - [`Searcher`] is one query connection; the runner opens one per client thread.

use crate::params::Params;
use crate::{Metric, Result};
use ndarray::ArrayView2;
use std::collections::BTreeMap;

/// What the backend needs to know about the data it loads.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// Dataset name; backends derive a validated table name from it.
    pub dataset: String,
    /// Distance used by the index and queries.
    pub metric: Metric,
    /// Vector dimension.
    pub dimension: usize,
}

/// Outcome of loading the train vectors.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LoadReport {
    /// Seconds spent loading rows (excludes index build). For a reused table, the seconds of
    /// the original load if known.
    pub seconds: f64,
    /// Rows in the table.
    pub rows: usize,
    /// True when an existing, matching table was reused instead of loaded.
    pub reused: bool,
    /// Table size on the server in bytes (data, without the vector index), if known.
    pub table_size_bytes: Option<u64>,
    /// How rows were loaded, e.g. `COPY BINARY` or `LOAD DATA LOCAL INFILE`.
    pub method: String,
}

/// A named phase of an index build and how long it took.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct BuildPhase {
    pub name: String,
    pub seconds: f64,
}

/// Outcome of building the index for one build point.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct BuildReport {
    /// Seconds of the index build statement alone (isecs); excludes the table load.
    pub seconds: f64,
    /// Index size in bytes as the server reports it.
    pub index_size_bytes: u64,
    /// Build phases, where the server reports them (pgvector).
    pub phases: Vec<BuildPhase>,
    /// Server notices and warnings raised by the build (e.g. maintenance_work_mem exceeded).
    pub notices: Vec<String>,
}

/// Server identity and the settings that shape results, for the result files.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ServerInfo {
    /// e.g. `MariaDB 11.8.3` or `PostgreSQL 17.6, pgvector 0.8.0`.
    pub version: String,
    /// e.g. `mhnsw_max_cache_size`, `shared_buffers`, `maintenance_work_mem`.
    pub settings: BTreeMap<String, String>,
}

/// Asks a running index build to stop (e.g. Ctrl-C); polled from another thread.
pub type Cancel<'a> = dyn Fn() -> bool + Sync + 'a;

/// The admin side of one database backend.
pub trait Backend: Send {
    /// Algorithm name as used in results and configs, e.g. `mariadb`, `pgvector_halfvec`.
    fn name(&self) -> &str;

    /// Version and settings of the server, recorded with every result.
    fn server_info(&mut self) -> Result<ServerInfo>;

    /// Create the table and load `train` with the server's fastest bulk path, or reuse a table
    /// that already holds exactly this data. Refuses wrong dimensions and non-finite values.
    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport>;

    /// Drop any previous index and build one for `build_args`. Validates the arguments first.
    fn build(&mut self, build_args: &Params) -> Result<BuildReport> {
        self.build_cancellable(build_args, &|| false)
    }

    /// [`build`](Backend::build), polling `cancel` several times a second while the server
    /// builds: once it returns true the server's statement is stopped and the result is
    /// [`crate::Error::Interrupted`], with no index left behind.
    fn build_cancellable(
        &mut self,
        build_args: &Params,
        cancel: &Cancel<'_>,
    ) -> Result<BuildReport>;

    /// [`build_cancellable`](Backend::build_cancellable) that also reports how far the build
    /// is into `watch`, where the server says (polled from the backend's own watcher thread).
    fn build_watched(
        &mut self,
        build_args: &Params,
        cancel: &Cancel<'_>,
        watch: &BuildWatch,
    ) -> Result<BuildReport> {
        let _ = watch;
        self.build_cancellable(build_args, cancel)
    }

    /// The server memory an index of `rows` x `dimension` vectors with `build_args` needs,
    /// against the setting that bounds it; `None` where nothing is bounded (or not known).
    /// Reads the setting from the server; validates the build arguments.
    fn memory_plan(
        &mut self,
        rows: usize,
        dimension: usize,
        build_args: &Params,
    ) -> Result<Option<MemoryPlan>> {
        let _ = (rows, dimension, build_args);
        Ok(None)
    }

    /// Check (EXPLAIN) that a query with `query_args` uses the vector index; an error otherwise.
    fn verify_index_used(&mut self, query: &[f32], k: usize, query_args: &Params) -> Result<()>;

    /// A new query connection on the loaded table and built index.
    fn searcher(&self) -> Result<Box<dyn Searcher>>;

    /// Drop the index (not the table); called when a sweep ends or before a rebuild.
    fn drop_index(&mut self) -> Result<()>;
}

/// One query connection.
pub trait Searcher: Send {
    /// Apply query arguments (e.g. ef_search) to this session. Validates them.
    fn set_query_args(&mut self, query_args: &Params) -> Result<()>;

    /// The ids (train row numbers) of the `k` nearest rows to `query`, nearest first, written
    /// into `ids` (cleared first). Fewer than `k` may be returned.
    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()>;
}

pub mod exact;
pub mod mariadb;
pub mod parallel;
pub mod pgvector;
pub mod plan;
pub mod prepared;
pub mod query_args;
pub mod table;
pub mod watch;

pub use plan::MemoryPlan;
pub use watch::{BuildStatus, BuildWatch};

/// How to reach the servers, and backend options that are not grid parameters.
#[derive(Debug, Clone, Default)]
pub struct BackendOptions {
    /// `--mariadb URL` (else resolved by [`crate::connect::mariadb_url`]).
    pub mariadb_url: Option<String>,
    /// `--postgres URL` (else resolved by [`crate::connect::postgres_url`]).
    pub postgres_url: Option<String>,
    /// Database (MariaDB) / schema (PostgreSQL) annbench owns and keeps its tables in;
    /// default `annbench`.
    pub schema: Option<String>,
    /// Connections used to load the table (default: MariaDB 1, PostgreSQL 2, the faster in
    /// `docs/bench-backends.md`).
    pub load_connections: Option<usize>,
    /// MariaDB's data directory as seen from this machine; only needed for the index size of
    /// MyISAM tables (default: the server's `@@datadir`).
    pub mariadb_datadir: Option<std::path::PathBuf>,
    /// `--timeout`: the longest one index build may take; backends apply it as a statement
    /// timeout on the build. `None`: no limit.
    pub build_timeout: Option<std::time::Duration>,
}

/// Algorithms with a database backend, as named on the CLI and in `algorithms/<name>/`.
pub const ALGORITHMS: &[&str] = &[
    "mariadb",
    "pgvector",
    "pgvector_halfvec",
    "pgvector_halfvec_column",
];

/// Connect the backend for `algorithm`.
pub fn create(algorithm: &str, opts: &BackendOptions) -> Result<Box<dyn Backend>> {
    match algorithm {
        "exact" => Ok(Box::new(exact::Exact::new())),
        "mariadb" => Ok(Box::new(mariadb::MariaDb::connect(opts)?)),
        "pgvector" => Ok(Box::new(pgvector::PgVector::connect(
            opts,
            pgvector::Variant::Vector,
        )?)),
        "pgvector_halfvec" => Ok(Box::new(pgvector::PgVector::connect(
            opts,
            pgvector::Variant::HalfvecIndex,
        )?)),
        "pgvector_halfvec_column" => Ok(Box::new(pgvector::PgVector::connect(
            opts,
            pgvector::Variant::HalfvecColumn,
        )?)),
        other => Err(crate::Error::Config(format!(
            "unknown algorithm '{other}': expected one of {} (or exact, the in-process reference)",
            ALGORITHMS.join(", ")
        ))),
    }
}

//! The backends: one small trait per role, the table of algorithm implementations, one
//! vertical per database and one folder per algorithm. Build arguments are set once per index;
//! query arguments many times per index (ann-benchmarks' split).
//!
//! - [`Backend`] owns the admin connection: load the table once, (re)build the index per
//!   build point, verify the query plan, report sizes and server settings.
//! - [`Searcher`] is one query connection; the runner opens one per client thread.
//! - [`stream::StreamTable`] ([`Backend::stream_table`]) writes a streaming runbook's batches
//!   to a table of its own (`annbench stream`), for the SQL databases.
//! - [`ALGORITHMS`] lists every algorithm's [`Algorithm`] ([`spec`]): how to connect it, its
//!   checks of the data and its [`Database`], pointing at its declaration
//!   ([`crate::registry::AlgorithmDecl`], in the folder's `decl.rs`, compiled in the
//!   registry). [`args`] (the registry's) checks parameters against the declaration, for
//!   config validation and backends alike.
//! - Databases: one folder each, e.g. [`mariadb`] (with its one algorithm, MHNSW) and
//!   [`postgres`] (shared by the pgvector algorithms: [`pgvector`], [`pgvector_ivfflat`],
//!   [`pgvector_binary`]); the registry's lines (`src/registry/decls.rs`) list them all. Each
//!   has its [`Database`] entry for `servers check` and result files. [`sql`] is the
//!   machinery the SQL databases share.

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
    ) -> Result<BuildReport> {
        self.build_watched(build_args, cancel, &BuildWatch::default())
    }

    /// [`build_cancellable`](Backend::build_cancellable) that also reports how far the build
    /// is into `watch`, where the server says (polled from the backend's own watcher thread).
    /// The one build method a backend implements.
    fn build_watched(
        &mut self,
        build_args: &Params,
        cancel: &Cancel<'_>,
        watch: &BuildWatch,
    ) -> Result<BuildReport>;

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

    /// Add the filter attribute columns (a value for every row id of each, see
    /// [`crate::dataset::filters`]) to the loaded table, keeping columns that already hold
    /// these values; queries then filter with `attrs`' conditions. Returns the seconds spent
    /// (0 when all were kept). Algorithms without filtered queries refuse.
    fn load_attributes(&mut self, attrs: &filter::Attributes) -> Result<f64> {
        let _ = attrs;
        Err(crate::Error::Config(format!(
            "{} does not run filtered queries (no selectivity query arg)",
            self.name()
        )))
    }

    /// Check (EXPLAIN) that a query with `query_args` uses the vector index, or for a filtered
    /// query the attribute's B-tree (then sorting by exact distance); an error for a plan with
    /// neither. Returns the plan in a few words, with EXPLAIN's lines in brackets.
    fn verify_index_used(&mut self, query: &[f32], k: usize, query_args: &Params)
    -> Result<String>;

    /// A new query connection on the loaded table and built index.
    fn searcher(&self) -> Result<Box<dyn Searcher>>;

    /// Drop the index (not the table); called when a sweep ends or before a rebuild.
    fn drop_index(&mut self) -> Result<()>;

    /// Drop the tables (and indexes) this algorithm keeps for `dataset`, with their metadata,
    /// so that the next run loads them again (`servers drop-tables`, and the calibration
    /// tables of a dry run). Tables shared with other algorithms go too.
    fn drop_tables(&mut self, dataset: &str) -> Result<()> {
        let _ = dataset;
        Ok(())
    }

    /// Fail unless the index queries run on now is the one the last [`build`](Backend::build)
    /// of this backend made (not dropped or rebuilt by another session since): the runner
    /// calls it after measuring each point and stores the point only if it passes. Database
    /// backends check the build id and the index itself ([`sql::guard`]); the default, for
    /// in-process backends, has nothing to check.
    /// Open the admin connection again after the server restarted (`run --restart`), with
    /// its session settings and the table lock it held; the table and index stay as built.
    fn reconnect(&mut self) -> Result<()> {
        Err(crate::Error::Backend(format!(
            "{}: measuring across a server restart is not supported",
            self.name()
        )))
    }

    fn check_index(&mut self) -> Result<()> {
        Ok(())
    }

    /// The writes of a streaming runbook (`annbench stream`) on this algorithm's stream
    /// table; backends without them refuse, naming those that have them.
    fn stream_table(&mut self) -> Result<&mut dyn stream::StreamTable> {
        Err(stream::not_streaming(self.name()))
    }
}

/// One query connection.
pub trait Searcher: Send {
    /// Apply query arguments (e.g. ef_search) to this session. Validates them.
    fn set_query_args(&mut self, query_args: &Params) -> Result<()>;

    /// The ids (train row numbers) of the `k` nearest rows to `query`, nearest first, written
    /// into `ids` (cleared first). Fewer than `k` may be returned.
    fn search(&mut self, query: &[f32], k: usize, ids: &mut Vec<i64>) -> Result<()>;

    /// Which local processes serve this connection, for server CPU from `/proc` ([`cost`]).
    fn process_hint(&mut self) -> cost::ProcessHint {
        cost::ProcessHint::None
    }

    /// The server's own cumulative statistics of this connection's search statement (read
    /// between passes, never during one).
    fn statements(&mut self) -> cost::Statements {
        cost::Statements::unavailable("not a database server")
    }

    /// The server's data directory, as the server names it, for the block device of storage
    /// I/O ([`cost::DataDirectory`]).
    fn data_directory(&mut self) -> cost::DataDirectory {
        cost::DataDirectory::NotSaid
    }
}

pub mod cost;
pub mod describe;
pub mod filter;
pub mod handshake;
pub mod named;
pub mod parallel;
pub mod plan;
pub mod postgres;
pub mod prepared;
pub mod server;
pub mod spec;
pub mod sql;
pub mod stream;
pub mod table;
pub mod watch;

#[cfg(test)]
mod tests;

pub use named::NamedServer;
pub use plan::MemoryPlan;
pub use watch::{BuildStatus, BuildWatch};

pub use server::{ConnectionLimit, Database, Version};
pub use spec::Algorithm;

pub use crate::registry::args;
pub use crate::registry::{algorithm_names, check_dimension, check_metric, parameter_settings};
pub use crate::results::{BuildPhase, ServerInfo};

use crate::connect::{ServerKind, ServerUrl};
use std::path::PathBuf;

macro_rules! implementations {
    ($($folder:ident: [$($algorithm:ident),+]),+ $(,)?) => {
        $(pub mod $folder;)+
        /// Every algorithm annbench runs, in the order help and docs list them
        /// (`registry::decls::algorithm_list!`, the one list): each entry points at its
        /// declaration, the same entry of [`crate::registry::ALGORITHMS`].
        pub static ALGORITHMS: &[&Algorithm] = &[$($(&$folder::$algorithm),+),+];
    };
}
crate::registry::algorithm_list!(implementations);

/// The registered algorithm `name`.
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().copied().find(|a| a.name == name)
}

/// The registered algorithm `name`, or an error listing the known ones.
pub fn find_algorithm(name: &str) -> Result<&'static Algorithm> {
    algorithm(name).ok_or_else(|| crate::registry::unknown_algorithm(name))
}

/// The databases the registered algorithms run on, each once, in registry order.
pub fn databases() -> Vec<&'static Database> {
    let mut out: Vec<&'static Database> = Vec::new();
    for db in ALGORITHMS.iter().filter_map(|a| a.database) {
        if !out.iter().any(|d| d.kind == db.kind) {
            out.push(db);
        }
    }
    out
}

/// How to reach the servers, and backend options that are not grid parameters.
#[derive(Debug, Clone, Default)]
pub struct BackendOptions {
    /// Server URLs given explicitly (`--mariadb URL`, `--postgres URL`); a server not named
    /// here is resolved by [`crate::connect::server_url`] (environment, `servers.env`).
    pub urls: BTreeMap<ServerKind, String>,
    /// Database (MariaDB) / schema (PostgreSQL) annbench owns and keeps its tables in;
    /// default `annbench`.
    pub schema: Option<String>,
    /// Connections used to load the table (default: MariaDB 1, PostgreSQL 2, the faster in
    /// `docs/bench-backends.md`).
    pub load_connections: Option<usize>,
    /// A server's data directory as seen from this machine; MariaDB needs it only for the
    /// index size of MyISAM tables (default: its `@@datadir`, or `ANNBENCH_MARIADB_DATADIR`).
    pub data_dirs: BTreeMap<ServerKind, PathBuf>,
    /// `--timeout`: the longest one index build may take; the build watcher stops a build that
    /// passes it, and such a build is never measured ([`sql::watch`]). `None`: no limit.
    pub build_timeout: Option<std::time::Duration>,
    /// Named servers (`--postgres NAME=URL`, repeatable): two or more of one database run
    /// interleaved, each under its name as label ([`named`]).
    pub servers: Vec<NamedServer>,
}

impl BackendOptions {
    /// These options with `url` for servers of `kind`.
    pub fn with_url(mut self, kind: ServerKind, url: impl Into<String>) -> Self {
        self.urls.insert(kind, url.into());
        self
    }

    /// These options with the URLs that are given (e.g. the `--mariadb` / `--postgres` flags).
    pub fn with_urls(
        mut self,
        urls: impl IntoIterator<Item = (ServerKind, Option<String>)>,
    ) -> Self {
        for (kind, url) in urls {
            if let Some(url) = url {
                self.urls.insert(kind, url);
            }
        }
        self
    }

    /// The URL of the `kind` server: the explicit one, else resolved.
    pub fn url(&self, kind: ServerKind) -> Result<ServerUrl> {
        crate::connect::server_url(kind, self.urls.get(&kind).map(String::as_str))
    }

    /// Connections used to load a table: the option, else the database's `default`.
    pub fn load_connections_or(&self, default: usize) -> usize {
        self.load_connections.unwrap_or(default).max(1)
    }

    /// The schema (MariaDB: database) annbench keeps its tables in, checked.
    pub fn schema(&self) -> Result<String> {
        let s = self.schema.clone().unwrap_or_else(|| "annbench".into());
        table::check_ident(&s, "schema name")?;
        Ok(s)
    }
}

/// Drop every table the algorithms on `database` keep for `dataset` (each algorithm says which
/// are its own: [`Backend::drop_tables`]).
pub fn drop_tables(database: &Database, dataset: &str, opts: &BackendOptions) -> Result<()> {
    for a in ALGORITHMS
        .iter()
        .filter(|a| a.database.is_some_and(|d| d.kind == database.kind))
    {
        (a.create)(opts)?.drop_tables(dataset)?;
    }
    Ok(())
}

/// Ask every database's waits to end soon ([`Database::stop_waits`]): Ctrl-C and signals.
pub fn request_stop() {
    STOP.store(true, std::sync::atomic::Ordering::SeqCst);
    for hooks in databases().iter().filter_map(|d| d.stop_waits) {
        (hooks.request)();
    }
}

/// Forget a stop request, before a new run.
pub fn clear_stop() {
    STOP.store(false, std::sync::atomic::Ordering::SeqCst);
    for hooks in databases().iter().filter_map(|d| d.stop_waits) {
        (hooks.clear)();
    }
}

/// Set by [`request_stop`], cleared by [`clear_stop`]: statements that poll for a stop
/// (a streaming runbook's writes, [`sql::stream`]) read it.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a stop was requested ([`request_stop`]) and not cleared since.
pub fn stop_requested() -> bool {
    STOP.load(std::sync::atomic::Ordering::SeqCst)
}

/// The registered database whose key is `key` (`mariadb`, `postgres`).
pub fn database(key: &str) -> Option<&'static Database> {
    databases().into_iter().find(|d| d.kind.key() == key)
}

/// Connect the backend for `algorithm`.
pub fn create(algorithm: &str, opts: &BackendOptions) -> Result<Box<dyn Backend>> {
    (find_algorithm(algorithm)?.create)(opts)
}

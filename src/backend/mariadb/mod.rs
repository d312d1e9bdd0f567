//! The MariaDB vertical and its one algorithm, MHNSW: an `id INT PRIMARY KEY, v VECTOR(d) NOT
//! NULL` table per (dataset, engine) in a database annbench owns, and `VECTOR INDEX ... M=..
//! DISTANCE=..` on it. The server's errors, version check, settings and `servers check` live
//! here too.

mod build;
mod check;
mod conn;
pub mod dialect;
pub mod cost;
pub mod errors;
pub mod load;
mod load_method;
mod load_send;
pub mod privileges;
pub mod search;
pub mod server;
mod stop;
pub mod stream;

pub use crate::registry::decls::mariadb as decl;
pub use errors::sql_err;
pub use stop::KILLABLE_STATE;
pub use build::cache_notice;
pub use load::LoadMethod;

use super::prepared::PreparedFor;
use super::server::Database;
use super::spec::Algorithm;
use super::sql::meta::{self, Meta};
use super::sql::{Cell, SqlConn, TableName, guard, reuse};
use super::table::{check_train, fingerprint_hex, table_name};
use super::{
    Backend, BackendOptions, BuildReport, BuildWatch, Cancel, LoadReport, MemoryPlan, Searcher,
    ServerInfo, TableSpec,
};
use crate::connect::{ServerKind, ServerUrl};
use crate::params::Params;
use crate::{Error, Metric, Result};
use mysql::Conn;
use ndarray::ArrayView2;
use std::path::PathBuf;

/// MariaDB, for the registry.
pub static DATABASE: Database = Database {
    versioned: "MariaDB",
    kind: ServerKind::MariaDb,
    server_info: server::server_info_at,
    check: check::check,
    privileges: check::privileges_at,
    // Its reads end at the driver's read timeout, and a running statement is killed by the
    // build watcher.
    stop_waits: None,
    connection_limit: Some(check::connection_limit_at),
    // The admin connection, the stream's writer (stream.rs), and the one that kills a
    // statement or watches a build (stop.rs).
    stream_connections: 3,
};

pub static ALGORITHM: Algorithm = Algorithm {
    decl: &decl::ALGORITHM,
    database: Some(&DATABASE),
    create: |o| Ok(Box::new(MariaDb::connect(o)?)),
    check_data: load::check_data,
};

/// Name of the vector index annbench creates (and the only index it drops).
pub const INDEX_NAME: &str = "annbench_vidx";

/// Storage engine of the table (a build arg: the table key includes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    InnoDb,
    MyIsam,
}

impl Engine {
    fn parse(text: Option<&str>) -> Engine {
        match text {
            Some("MyISAM") => Engine::MyIsam,
            _ => Engine::InnoDb,
        }
    }
    fn sql(self) -> &'static str {
        match self {
            Engine::InnoDb => "InnoDB",
            Engine::MyIsam => "MyISAM",
        }
    }
    fn prefix(self) -> &'static str {
        match self {
            Engine::InnoDb => "innodb",
            Engine::MyIsam => "myisam",
        }
    }
}

/// The dataset currently loaded.
#[derive(Debug, Clone)]
struct Loaded {
    spec: TableSpec,
    rows: usize,
    fingerprint: String,
    /// Engine of the table the current index is (or will be) on.
    engine: Engine,
    /// The filter attribute columns, once [`Backend::load_attributes`] added them.
    attrs: Option<std::sync::Arc<super::filter::Attributes>>,
    /// The stream table, when this is one ([`stream`]): then the index and queries are on it.
    stream: Option<TableName>,
}

/// Fills a freshly created table (qualified name given); returns (seconds, method).
type Fill<'a> = dyn FnMut(&mut dyn SqlConn, &str) -> Result<(f64, String)> + 'a;

/// Admin connection to MariaDB.
pub struct MariaDb {
    url: ServerUrl,
    conn: Conn,
    db: String,
    datadir: Option<PathBuf>,
    /// How [`Backend::load`] sends rows; the fastest measured by default.
    pub load_method: LoadMethod,
    /// Connections used by [`Backend::load`].
    pub load_connections: usize,
    /// Longest one index build may take (enforced by the client, see [`stop`]).
    pub build_timeout: Option<std::time::Duration>,
    loaded: Option<Loaded>,
    /// The build id ([`guard`]) and identity ([`build::index_identity`]) of the index the last
    /// build made.
    built: Option<(String, String)>,
    /// The build arguments of the last complete build (a stream's reindex repeats it).
    built_args: Option<Params>,
    /// The stream's writer connection, while `loaded` is a stream table ([`stream`]).
    stream: Option<stream::State>,
    /// The longest one write or maintenance statement of a stream may take.
    stream_timeout: Option<std::time::Duration>,
}

/// The admin connection's read limit: the build timeout is enforced by the watcher's KILL
/// QUERY; a server that stopped answering cannot take that, so reads end 30 s past it.
fn admin_read_limit(build_timeout: Option<std::time::Duration>) -> Option<std::time::Duration> {
    build_timeout.map(|t| t + std::time::Duration::from_secs(30))
}

impl MariaDb {
    /// Connect, check the server has vector support (>= 11.7) and create the database.
    pub fn connect(opts: &BackendOptions) -> Result<Self> {
        let url = opts.url(ServerKind::MariaDb)?;
        let mut conn = server::connect_reading(&url, admin_read_limit(opts.build_timeout))?;
        server::check_version(&mut conn, &url)?;
        let db = opts.schema()?;
        conn.run(
            &format!("CREATE DATABASE IF NOT EXISTS `{db}`"),
            &format!("creating database `{db}` (grant CREATE on it)"),
        )?;
        meta::ensure(&mut conn, &db)?;
        let datadir = opts
            .data_dirs
            .get(&ServerKind::MariaDb)
            .cloned()
            .or_else(|| std::env::var_os("ANNBENCH_MARIADB_DATADIR").map(PathBuf::from));
        Ok(MariaDb {
            url,
            conn,
            db,
            datadir,
            load_method: LoadMethod::default(),
            load_connections: opts.load_connections_or(load::DEFAULT_CONNECTIONS),
            build_timeout: opts.build_timeout,
            loaded: None,
            built: None,
            built_args: None,
            stream: None,
            stream_timeout: opts.build_timeout,
        })
    }

    /// Drop the tables (both engines) annbench loaded for `dataset`, its stream table, and
    /// their metadata.
    pub fn drop_tables(&mut self, dataset: &str) -> Result<()> {
        for engine in [Engine::InnoDb, Engine::MyIsam] {
            let t = self.table(engine, dataset)?;
            reuse::drop_table(&mut self.conn, &t)?;
        }
        let s = super::sql::stream::table(&self.db, ALGORITHM.name, dataset)?;
        reuse::drop_table(&mut self.conn, &s)?;
        self.loaded = None;
        self.stream = None;
        Ok(())
    }

    /// The table the index and queries are on: the stream table, else `l.engine`'s.
    fn current(&self, l: &Loaded) -> Result<TableName> {
        match &l.stream {
            Some(t) => Ok(t.clone()),
            None => self.table(l.engine, &l.spec.dataset),
        }
    }

    fn table(&self, engine: Engine, dataset: &str) -> Result<TableName> {
        Ok(TableName {
            schema: self.db.clone(),
            name: table_name(engine.prefix(), dataset)?,
        })
    }

    fn qualified(&self, engine: Engine, dataset: &str) -> Result<String> {
        Ok(self.table(engine, dataset)?.qualified(self.conn.dialect()))
    }

    fn loaded(&self) -> Result<&Loaded> {
        self.loaded
            .as_ref()
            .ok_or_else(|| Error::Backend("mariadb: load() must run before this step".into()))
    }

    /// Reuse `engine`'s table when its metadata matches, else (re)create and fill it with
    /// `fill`, which returns (seconds, method).
    fn ensure_table(
        &mut self,
        engine: Engine,
        spec: &TableSpec,
        rows: usize,
        fingerprint: &str,
        fill: &mut Fill<'_>,
    ) -> Result<LoadReport> {
        let t = self.table(engine, &spec.dataset)?;
        let qt = t.qualified(self.conn.dialect());
        let want = Meta {
            dataset: spec.dataset.clone(),
            rows: rows as u64,
            dimension: spec.dimension as u32,
            fingerprint: fingerprint.to_string(),
            load_seconds: 0.0,
            method: String::new(),
        };
        let create = format!(
            "CREATE TABLE {qt} (id INT NOT NULL PRIMARY KEY, v VECTOR({}) NOT NULL) ENGINE={}",
            spec.dimension,
            engine.sql()
        );
        let outcome = reuse::ensure_table(&mut self.conn, &t, want, &create, &mut |c| {
            fill(c, &qt)
        })?;
        Ok(LoadReport {
            seconds: outcome.meta.load_seconds,
            rows,
            reused: outcome.reused,
            table_size_bytes: self.table_size(engine, &t.name).ok(),
            method: outcome.meta.method,
        })
    }

    /// Data size of the table: the InnoDB tablespace file, or MyISAM's data + index length.
    fn table_size(&mut self, engine: Engine, t: &str) -> Result<u64> {
        match engine {
            Engine::InnoDb => self.tablespace_size(&format!("{}/{t}", self.db)),
            Engine::MyIsam => {
                let row = self.conn.first_row(
                    "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES \
                     WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                    &[super::sql::Arg::Text(&self.db), super::sql::Arg::Text(t)],
                    "reading the table size",
                )?;
                first_int(row)
                    .ok_or_else(|| Error::Backend(format!("mariadb: no size for table {t}")))
            }
        }
    }

    fn tablespace_size(&mut self, name: &str) -> Result<u64> {
        let row = self.conn.first_row(
            "SELECT FILE_SIZE FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = ?",
            &[super::sql::Arg::Text(name)],
            "reading information_schema.INNODB_SYS_TABLESPACES (needs the PROCESS privilege: \
             GRANT PROCESS ON *.* TO your user)",
        )?;
        first_int(row).ok_or_else(|| {
            Error::Backend(format!(
                "mariadb: tablespace '{name}' not found in INNODB_SYS_TABLESPACES (grant the \
                 PROCESS privilege, or the server uses innodb_file_per_table=OFF)"
            ))
        })
    }
}

fn first_int(row: Option<Vec<Cell>>) -> Option<u64> {
    row?.first()?.int().map(|n| n as u64)
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        guard::unlock_all(&mut self.conn);
    }
}

impl Backend for MariaDb {
    fn name(&self) -> &str {
        ALGORITHM.name
    }

    fn server_info(&mut self) -> Result<ServerInfo> {
        Ok(server::server_info(&mut self.conn, &self.url)?.with_transport(&self.url))
    }

    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        super::check_dimension(&ALGORITHM, spec.dimension)?;
        check_train(train, spec.dimension, &spec.dataset)?;
        load::check_lengths(train, &spec.dataset)?;
        let fingerprint = fingerprint_hex(train);
        self.loaded = None;
        self.built = None;
        self.stream = None;
        // Held by this session until it closes: no other run touches the dataset's tables
        // (this one and the MyISAM copy filled from it) meanwhile.
        let main = self.table(Engine::InnoDb, &spec.dataset)?;
        guard::lock_table(&mut self.conn, &main)?;
        let (url, method, conns) = (self.url.clone(), self.load_method, self.load_connections);
        let report = self.ensure_table(
            Engine::InnoDb,
            spec,
            train.nrows(),
            &fingerprint,
            &mut |_, qt| {
                let done = load::load_rows(&url, qt, train, method, conns)?;
                Ok((done.seconds, done.method))
            },
        )?;
        self.loaded = Some(Loaded {
            spec: spec.clone(),
            rows: train.nrows(),
            fingerprint,
            engine: Engine::InnoDb,
            attrs: None,
            stream: None,
        });
        Ok(report)
    }

    fn load_attributes(&mut self, attrs: &super::filter::Attributes) -> Result<f64> {
        let rows = self.loaded()?.rows;
        attrs.check_one_value_per_row("mariadb", rows)?;
        let dataset = self.loaded()?.spec.dataset.clone();
        let t = self.table(Engine::InnoDb, &dataset)?;
        let seconds = super::sql::attrs::ensure(&mut self.conn, &t, &attrs.columns)?;
        if let Some(l) = self.loaded.as_mut() {
            l.attrs = Some(std::sync::Arc::new(attrs.clone()));
        }
        Ok(seconds)
    }

    fn build_watched(
        &mut self,
        build_args: &Params,
        cancel: &Cancel<'_>,
        watch: &BuildWatch,
    ) -> Result<BuildReport> {
        build::build(self, build_args, cancel, watch)
    }

    fn memory_plan(
        &mut self,
        rows: usize,
        dimension: usize,
        build_args: &Params,
    ) -> Result<Option<MemoryPlan>> {
        build::memory_plan(self, rows, dimension, build_args).map(Some)
    }

    fn verify_index_used(
        &mut self,
        query: &[f32],
        k: usize,
        query_args: &Params,
    ) -> Result<String> {
        build::verify_index_used(self, query, k, query_args)
    }

    fn searcher(&self) -> Result<Box<dyn Searcher>> {
        let l = self.loaded()?;
        Ok(Box::new(search::MariaSearcher {
            conn: server::connect_reading(&self.url, Some(server::QUERY_READ_LIMIT))?,
            table: self.current(l)?.qualified(self.conn.dialect()),
            metric: l.spec.metric,
            dimension: l.spec.dimension,
            attrs: l.attrs.clone(),
            filter: String::new(),
            stmt: PreparedFor::new(),
        }))
    }

    fn reconnect(&mut self) -> Result<()> {
        let mut conn = server::connect_reading(&self.url, admin_read_limit(self.build_timeout))?;
        if let Some(l) = &self.loaded {
            guard::lock_table(&mut conn, &self.table(Engine::InnoDb, &l.spec.dataset)?)?;
        }
        self.conn = conn;
        Ok(())
    }

    fn check_index(&mut self) -> Result<()> {
        let l = self.loaded()?.clone();
        let t = self.current(&l)?;
        let now = build::index_identity(self, l.engine, &t.name)?;
        let built = self.built.clone();
        guard::check_build(
            &mut self.conn,
            &t,
            ALGORITHM.name,
            built.as_ref().map(|(id, _)| id.as_str()),
            now.is_some() && now.as_ref() == built.as_ref().map(|(_, identity)| identity),
        )
    }

    fn drop_tables(&mut self, dataset: &str) -> Result<()> {
        MariaDb::drop_tables(self, dataset)
    }

    fn stream_table(&mut self) -> Result<&mut dyn super::stream::StreamTable> {
        Ok(self)
    }

    fn drop_index(&mut self) -> Result<()> {
        let l = self.loaded()?.clone();
        let t = self.current(&l)?;
        let qt = t.qualified(self.conn.dialect());
        self.built = None;
        guard::clear_build(&mut self.conn, &t)?;
        self.conn.run(
            &format!("DROP INDEX IF EXISTS {INDEX_NAME} ON {qt}"),
            "dropping the vector index",
        )
    }
}

/// The server's distance name for `metric`.
fn distance_name(metric: Metric) -> &'static str {
    match metric {
        Metric::Euclidean => "euclidean",
        Metric::Angular => "cosine",
    }
}

//! MariaDB MHNSW backend: an `id INT PRIMARY KEY, v VECTOR(d) NOT NULL` table per (dataset,
//! engine) in a database annbench owns, and `VECTOR INDEX ... M=.. DISTANCE=..` on it.

mod build;
pub mod load;
mod load_send;
mod meta;
pub mod search;
pub(crate) mod stop;

pub use load::LoadMethod;

use super::prepared::PreparedFor;
use super::table::{check_ident, check_train, fingerprint_hex, table_name};
use super::{
    Backend, BackendOptions, BuildReport, BuildWatch, Cancel, LoadReport, MemoryPlan, Searcher,
    ServerInfo, TableSpec,
};
use crate::connect::{ServerUrl, connect_mariadb, mariadb_url};
use crate::params::Params;
use crate::{Error, Metric, Result};
use mysql::Conn;
use mysql::prelude::Queryable;
use ndarray::ArrayView2;
use std::path::PathBuf;

/// Name of the vector index annbench creates (and the only index it drops).
pub const INDEX_NAME: &str = "annbench_vidx";

/// Storage engine of the table (a build arg: the table key includes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    InnoDb,
    MyIsam,
}

impl Engine {
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
    /// Engine and qualified name of the table the current index is (or will be) on.
    engine: Engine,
}

/// Fills a freshly created table (qualified name given); returns (seconds, method).
type Fill<'a> = dyn FnMut(&mut MariaDb, &str) -> Result<(f64, String)> + 'a;

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
}

impl MariaDb {
    /// Connect, check the server has vector support (>= 11.7) and create the database.
    pub fn connect(opts: &BackendOptions) -> Result<Self> {
        let url = mariadb_url(opts.mariadb_url.as_deref())?;
        let mut conn = connect_mariadb(&url)?;
        let (major, minor, _) = conn.server_version();
        if (major, minor) < (11, 7) {
            return Err(Error::Server(format!(
                "MariaDB at {url} is {major}.{minor}: vector indexes need MariaDB 11.7 or newer"
            )));
        }
        let db = opts.schema.clone().unwrap_or_else(|| "annbench".into());
        check_ident(&db, "database name")?;
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))
            .map_err(|e| sql_err(e, &format!("creating database `{db}` (grant CREATE on it)")))?;
        meta::ensure(&mut conn, &db)?;
        Ok(MariaDb {
            url,
            conn,
            db,
            datadir: opts
                .mariadb_datadir
                .clone()
                .or_else(|| std::env::var_os("ANNBENCH_MARIADB_DATADIR").map(PathBuf::from)),
            load_method: LoadMethod::default(),
            load_connections: opts
                .load_connections
                .unwrap_or(load::DEFAULT_CONNECTIONS)
                .max(1),
            build_timeout: opts.build_timeout,
            loaded: None,
        })
    }

    /// Drop the tables (both engines) annbench loaded for `dataset`, and their metadata.
    pub fn drop_tables(&mut self, dataset: &str) -> Result<()> {
        for engine in [Engine::InnoDb, Engine::MyIsam] {
            let (qt, t) = self.qualified(engine, dataset)?;
            meta::delete(&mut self.conn, &self.db, &t)?;
            self.exec(&format!("DROP TABLE IF EXISTS {qt}"), "dropping a table")?;
        }
        self.loaded = None;
        Ok(())
    }

    fn qualified(&self, engine: Engine, dataset: &str) -> Result<(String, String)> {
        let t = table_name(engine.prefix(), dataset)?;
        Ok((format!("`{}`.`{t}`", self.db), t))
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
        let (qt, t) = self.qualified(engine, &spec.dataset)?;
        let want = meta::Meta {
            dataset: spec.dataset.clone(),
            rows: rows as u64,
            dimension: spec.dimension as u32,
            fingerprint: fingerprint.to_string(),
            load_seconds: 0.0,
            method: String::new(),
        };
        if let Some(have) = meta::get(&mut self.conn, &self.db, &t)? {
            let same = have.rows == want.rows
                && have.dimension == want.dimension
                && have.fingerprint == want.fingerprint;
            if same && self.count_rows(&qt).ok() == Some(want.rows) {
                return Ok(LoadReport {
                    seconds: have.load_seconds,
                    rows,
                    reused: true,
                    table_size_bytes: self.table_size(engine, &t).ok(),
                    method: have.method,
                });
            }
        }
        meta::delete(&mut self.conn, &self.db, &t)?;
        self.exec(
            &format!("DROP TABLE IF EXISTS {qt}"),
            "dropping the old table",
        )?;
        self.exec(
            &format!(
                "CREATE TABLE {qt} (id INT NOT NULL PRIMARY KEY, v VECTOR({}) NOT NULL) ENGINE={}",
                spec.dimension,
                engine.sql()
            ),
            "creating the table",
        )?;
        let (seconds, method) = fill(self, &qt)?;
        let got = self.count_rows(&qt)?;
        if got != rows as u64 {
            return Err(Error::Backend(format!(
                "mariadb: {qt} holds {got} rows after the load; expected {rows}"
            )));
        }
        let m = meta::Meta {
            load_seconds: seconds,
            method: method.clone(),
            ..want
        };
        meta::put(&mut self.conn, &self.db, &t, &m)?;
        Ok(LoadReport {
            seconds,
            rows,
            reused: false,
            table_size_bytes: self.table_size(engine, &t).ok(),
            method,
        })
    }

    fn count_rows(&mut self, qt: &str) -> Result<u64> {
        let n: Option<u64> = self
            .conn
            .query_first(format!("SELECT COUNT(*) FROM {qt}"))
            .map_err(|e| sql_err(e, "counting rows"))?;
        Ok(n.unwrap_or(0))
    }

    fn exec(&mut self, sql: &str, what: &str) -> Result<()> {
        self.conn.query_drop(sql).map_err(|e| sql_err(e, what))
    }

    /// Data size of the table: the InnoDB tablespace file, or MyISAM's data + index length.
    fn table_size(&mut self, engine: Engine, t: &str) -> Result<u64> {
        match engine {
            Engine::InnoDb => self.tablespace_size(&format!("{}/{t}", self.db)),
            Engine::MyIsam => {
                let n: Option<u64> = self
                    .conn
                    .exec_first(
                        "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES \
                         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                        (&self.db, t),
                    )
                    .map_err(|e| sql_err(e, "reading the table size"))?;
                n.ok_or_else(|| Error::Backend(format!("mariadb: no size for table {t}")))
            }
        }
    }

    fn tablespace_size(&mut self, name: &str) -> Result<u64> {
        let n: Option<u64> = self
            .conn
            .exec_first(
                "SELECT FILE_SIZE FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = ?",
                (name,),
            )
            .map_err(|e| {
                sql_err(
                    e,
                    "reading information_schema.INNODB_SYS_TABLESPACES (needs the PROCESS \
                     privilege: GRANT PROCESS ON *.* TO your user)",
                )
            })?;
        n.ok_or_else(|| {
            Error::Backend(format!(
                "mariadb: tablespace '{name}' not found in INNODB_SYS_TABLESPACES (grant the \
                 PROCESS privilege, or the server uses innodb_file_per_table=OFF)"
            ))
        })
    }
}

impl Backend for MariaDb {
    fn name(&self) -> &str {
        "mariadb"
    }

    fn server_info(&mut self) -> Result<ServerInfo> {
        let mut info = build::server_info(&mut self.conn)?;
        info.settings
            .insert("client_transport".into(), self.url.transport().into());
        Ok(info)
    }

    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        check_train(train, spec.dimension, &spec.dataset)?;
        load::check_lengths(train, &spec.dataset)?;
        let fingerprint = fingerprint_hex(train);
        self.loaded = None;
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
        });
        Ok(report)
    }

    fn build_cancellable(
        &mut self,
        build_args: &Params,
        cancel: &Cancel<'_>,
    ) -> Result<BuildReport> {
        build::build(self, build_args, cancel, &BuildWatch::default())
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

    fn verify_index_used(&mut self, query: &[f32], k: usize, query_args: &Params) -> Result<()> {
        build::verify_index_used(self, query, k, query_args)
    }

    fn searcher(&self) -> Result<Box<dyn Searcher>> {
        let l = self.loaded()?;
        let (qt, _) = self.qualified(l.engine, &l.spec.dataset)?;
        Ok(Box::new(search::MariaSearcher {
            conn: connect_mariadb(&self.url)?,
            table: qt,
            metric: l.spec.metric,
            dimension: l.spec.dimension,
            stmt: PreparedFor::new(),
        }))
    }

    fn drop_index(&mut self) -> Result<()> {
        let l = self.loaded()?.clone();
        let (qt, _) = self.qualified(l.engine, &l.spec.dataset)?;
        self.exec(
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

/// Map a driver error: a lost or refused connection is a server problem, anything else a
/// backend failure; both name what was being done.
pub(crate) fn sql_err(e: mysql::Error, what: &str) -> Error {
    let lost = match &e {
        mysql::Error::MySqlError(m) => matches!(m.code, 1053 | 1077 | 1152 | 1927 | 2006 | 2013),
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => true,
        mysql::Error::DriverError(d) => matches!(
            d,
            mysql::DriverError::ConnectTimeout
                | mysql::DriverError::CouldNotConnect(_)
                | mysql::DriverError::PacketOutOfSync
                | mysql::DriverError::UnexpectedPacket
                | mysql::DriverError::Timeout
        ),
        _ => false,
    };
    if lost {
        Error::Server(format!(
            "MariaDB connection lost while {what}: {e} (is the server still running?)"
        ))
    } else {
        Error::Backend(format!("MariaDB error while {what}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_connections_are_server_errors() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        let e = sql_err(mysql::Error::IoError(reset), "running a query");
        assert!(
            matches!(&e, Error::Server(m) if m.contains("running a query")),
            "{e:?}"
        );
        let gone = mysql::Error::DriverError(mysql::DriverError::PacketOutOfSync);
        assert!(matches!(sql_err(gone, "x"), Error::Server(_)));
        let ours = mysql::Error::DriverError(mysql::DriverError::MixedParams);
        assert!(matches!(sql_err(ours, "x"), Error::Backend(_)));
    }
}

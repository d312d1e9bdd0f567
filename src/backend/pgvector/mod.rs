//! pgvector HNSW backend: an `id int4 PRIMARY KEY, v vector(d) NOT NULL` table per dataset in a
//! schema annbench owns, shared by two variants; the HNSW index is on `v` (`pgvector`) or on
//! `v::halfvec(d)` (`pgvector_halfvec`). The third variant stores the column itself as
//! `halfvec(d)` in a table of its own (`pgvector_halfvec_column`): half the table size, and
//! the vectors rounded to float16 before anything is indexed.

mod build;
pub mod load;
mod memory;
mod meta;
pub mod search;

pub use load::LoadMethod;

use super::prepared::PreparedFor;
use super::table::{check_ident, check_train, check_train_within, fingerprint_hex, table_name};
use super::{
    Backend, BackendOptions, BuildReport, BuildWatch, Cancel, LoadReport, MemoryPlan, Searcher,
    ServerInfo, TableSpec,
};
use crate::connect::{ServerUrl, connect_postgres_with, postgres_config, postgres_url};
use crate::params::Params;
use crate::{Error, Result};
use ndarray::ArrayView2;
use postgres::Client;
use std::sync::{Arc, Mutex};

/// Session settings of every query connection (and of EXPLAIN). On small tables or with a
/// high `hnsw.ef_search` the planner prefers an exact sequential scan, which would benchmark
/// a full scan instead of the index; disabling it makes the planner use the HNSW index
/// whenever the query can use it (verify_index_used still checks the plan).
pub const SESSION_SQL: &str = "SET enable_seqscan = off";

/// Which pgvector variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// float32 `vector` column and index.
    Vector,
    /// float32 column, HNSW index on `v::halfvec(d)`.
    HalfvecIndex,
    /// `halfvec(d)` column (rounded to float16 on load) and index.
    HalfvecColumn,
}

impl Variant {
    /// The algorithm name, as on the CLI and in results.
    pub fn algorithm(self) -> &'static str {
        match self {
            Variant::Vector => "pgvector",
            Variant::HalfvecIndex => "pgvector_halfvec",
            Variant::HalfvecColumn => "pgvector_halfvec_column",
        }
    }

    /// Prefix of the table name: the float32 table is shared by two variants.
    fn table_prefix(self) -> &'static str {
        match self {
            Variant::Vector | Variant::HalfvecIndex => "vec",
            Variant::HalfvecColumn => "hvec",
        }
    }

    /// SQL type of the `v` column.
    fn column_type(self, d: usize) -> String {
        match self {
            Variant::Vector | Variant::HalfvecIndex => format!("vector({d})"),
            Variant::HalfvecColumn => format!("halfvec({d})"),
        }
    }
}

/// The dataset currently loaded.
#[derive(Debug, Clone)]
struct Loaded {
    spec: TableSpec,
    /// Schema-qualified table name.
    table: String,
    /// Index name (unqualified; it lives in the table's schema).
    index: String,
}

/// Admin connection to PostgreSQL.
pub struct PgVector {
    url: ServerUrl,
    client: Client,
    variant: Variant,
    schema: String,
    /// Server notices since the last drain (e.g. maintenance_work_mem exceeded).
    notices: Arc<Mutex<Vec<String>>>,
    /// How [`Backend::load`] sends rows.
    pub load_method: LoadMethod,
    /// Connections used by [`Backend::load`].
    pub load_connections: usize,
    /// Longest one index build may take (`statement_timeout` on the build statement).
    pub build_timeout: Option<std::time::Duration>,
    loaded: Option<Loaded>,
}

impl PgVector {
    /// Connect, check pgvector is installed and create the schema.
    pub fn connect(opts: &BackendOptions, variant: Variant) -> Result<Self> {
        let url = postgres_url(opts.postgres_url.as_deref())?;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let mut config = postgres_config(&url)?;
        let sink = Arc::clone(&notices);
        config.notice_callback(move |n| {
            if let Ok(mut v) = sink.lock() {
                v.push(format!("{}: {}", n.severity(), n.message()));
            }
        });
        let mut client = connect_postgres_with(&url, config)?;
        let ext = client
            .query_opt(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
                &[],
            )
            .map_err(|e| pg_err(e, "checking for pgvector"))?;
        if ext.is_none() {
            client
                .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
                .map_err(|e| {
                    Error::Server(format!(
                        "pgvector is not installed in the database of {url} and could not be \
                         created ({e}); run CREATE EXTENSION vector; as a superuser there"
                    ))
                })?;
        }
        client
            .batch_execute(SESSION_SQL)
            .map_err(|e| pg_err(e, "setting up the session"))?;
        let schema = opts.schema.clone().unwrap_or_else(|| "annbench".into());
        check_ident(&schema, "schema name")?;
        create_if_missing(
            &mut client,
            &format!("CREATE SCHEMA IF NOT EXISTS {schema}"),
        )
        .map_err(|e| pg_err(e, &format!("creating schema {schema} (grant CREATE)")))?;
        meta::ensure(&mut client, &schema)?;
        Ok(PgVector {
            url,
            client,
            variant,
            schema,
            notices,
            load_method: LoadMethod::default(),
            load_connections: opts.load_connections.unwrap_or(2).max(1),
            build_timeout: opts.build_timeout,
            loaded: None,
        })
    }

    /// Drop the table this variant loads for `dataset` (the float32 table is shared by
    /// `pgvector` and `pgvector_halfvec`) and its metadata.
    pub fn drop_table(&mut self, dataset: &str) -> Result<()> {
        let t = table_name(self.variant.table_prefix(), dataset)?;
        meta::delete(&mut self.client, &self.schema, &t)?;
        let sql = format!("DROP TABLE IF EXISTS {}.{t}", self.schema);
        self.exec(&sql, "dropping a table")?;
        self.loaded = None;
        Ok(())
    }

    fn loaded(&self) -> Result<&Loaded> {
        self.loaded
            .as_ref()
            .ok_or_else(|| Error::Backend("pgvector: load() must run before this step".into()))
    }

    fn exec(&mut self, sql: &str, what: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(|e| pg_err(e, what))
    }

    fn drain_notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }

    fn table_size(&mut self, table: &str) -> Option<u64> {
        let row = self
            .client
            .query_one(&format!("SELECT pg_table_size('{table}')::int8"), &[])
            .ok()?;
        row.try_get::<_, i64>(0).ok().map(|n| n as u64)
    }

    fn count_rows(&mut self, table: &str) -> Result<u64> {
        let row = self
            .client
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .map_err(|e| pg_err(e, "counting rows"))?;
        Ok(row.get::<_, i64>(0) as u64)
    }
}

impl Backend for PgVector {
    fn name(&self) -> &str {
        self.variant.algorithm()
    }

    fn server_info(&mut self) -> Result<ServerInfo> {
        let mut info = build::server_info(&mut self.client)?;
        info.settings
            .insert("client_transport".into(), self.url.transport().into());
        Ok(info)
    }

    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        match self.variant {
            Variant::HalfvecColumn => check_train_within(
                train,
                spec.dimension,
                &spec.dataset,
                half::f16::MAX.to_f32(),
                "the float16 range (+-65504) of a halfvec column; use pgvector or pgvector_halfvec",
            )?,
            Variant::Vector | Variant::HalfvecIndex => {
                check_train(train, spec.dimension, &spec.dataset)?
            }
        }
        let fingerprint = fingerprint_hex(train);
        self.loaded = None;
        let t = table_name(self.variant.table_prefix(), &spec.dataset)?;
        let index = format!("{t}_hnsw");
        check_ident(&index, "index name")?;
        let table = format!("{}.{t}", self.schema);
        let rows = train.nrows();
        let want = meta::Meta {
            rows: rows as u64,
            dimension: spec.dimension as u32,
            fingerprint,
            load_seconds: 0.0,
            method: String::new(),
        };
        let loaded = Loaded {
            spec: spec.clone(),
            table: table.clone(),
            index,
        };
        if let Some(have) = meta::get(&mut self.client, &self.schema, &t)? {
            let same = have.rows == want.rows
                && have.dimension == want.dimension
                && have.fingerprint == want.fingerprint;
            if same && self.count_rows(&table).ok() == Some(want.rows) {
                self.loaded = Some(loaded);
                return Ok(LoadReport {
                    seconds: have.load_seconds,
                    rows,
                    reused: true,
                    table_size_bytes: self.table_size(&table),
                    method: have.method,
                });
            }
        }
        meta::delete(&mut self.client, &self.schema, &t)?;
        self.exec(
            &format!(
                "DROP TABLE IF EXISTS {table};
                 CREATE TABLE {table} (id int4 NOT NULL, v {} NOT NULL);
                 ALTER TABLE {table} ALTER COLUMN v SET STORAGE PLAIN;",
                self.variant.column_type(spec.dimension)
            ),
            "creating the table",
        )?;
        let conns = self.load_connections;
        let copy = load::load_rows(&self.url, &table, train, self.load_method, conns)?;
        // The primary key is built after the rows are in (faster than maintaining it row by
        // row), and VACUUM sets hint bits and the visibility map now, so the first index
        // build does not pay for them inside isecs. Both count as load time.
        let t0 = std::time::Instant::now();
        self.exec(
            &format!("ALTER TABLE {table} ADD PRIMARY KEY (id)"),
            "adding the primary key",
        )?;
        self.exec(&format!("VACUUM (ANALYZE) {table}"), "vacuuming the table")?;
        let seconds = copy + t0.elapsed().as_secs_f64();
        let got = self.count_rows(&table)?;
        if got != rows as u64 {
            return Err(Error::Backend(format!(
                "pgvector: {table} holds {got} rows after the load; expected {rows}"
            )));
        }
        let method = if conns > 1 {
            format!("{} x{conns} connections", self.load_method.label())
        } else {
            self.load_method.label().to_string()
        };
        let m = meta::Meta {
            load_seconds: seconds,
            method: method.clone(),
            ..want
        };
        meta::put(&mut self.client, &self.schema, &t, &spec.dataset, &m)?;
        self.drain_notices();
        self.loaded = Some(loaded);
        Ok(LoadReport {
            seconds,
            rows,
            reused: false,
            table_size_bytes: self.table_size(&table),
            method,
        })
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
        memory::plan(self, rows, dimension, build_args).map(Some)
    }

    fn verify_index_used(&mut self, query: &[f32], k: usize, query_args: &Params) -> Result<()> {
        build::verify_index_used(self, query, k, query_args)
    }

    fn searcher(&self) -> Result<Box<dyn Searcher>> {
        let l = self.loaded()?;
        let mut client = crate::connect::connect_postgres(&self.url)?;
        client
            .batch_execute(SESSION_SQL)
            .map_err(|e| pg_err(e, "setting up the query session"))?;
        Ok(Box::new(search::PgSearcher {
            client,
            table: l.table.clone(),
            variant: self.variant,
            metric: l.spec.metric,
            dimension: l.spec.dimension,
            stmt: PreparedFor::new(),
        }))
    }

    fn drop_index(&mut self) -> Result<()> {
        let l = self.loaded()?.clone();
        self.exec(
            &format!("DROP INDEX IF EXISTS {}.{}", self.schema, l.index),
            "dropping the HNSW index",
        )?;
        self.drain_notices();
        Ok(())
    }
}

/// Map a driver error: a closed connection or a server shutting down is a server problem,
/// any other database error a backend failure; both name what was being done.
pub(crate) fn pg_err(e: postgres::Error, what: &str) -> Error {
    match e.as_db_error() {
        // Class 57P is the server going away (shutdown, terminated backend); 57014 is only a
        // cancelled statement and the session lives on.
        Some(db) if !db.code().code().starts_with("57P") => {
            let mut msg = format!("PostgreSQL error while {what}: {}", db.message());
            if let Some(h) = db.hint() {
                msg.push_str(&format!(" (hint: {h})"));
            }
            Error::Backend(msg)
        }
        Some(db) => Error::Server(format!(
            "PostgreSQL connection lost while {what}: {} (is the server still running?)",
            db.message()
        )),
        _ if e.is_closed() || is_io(&e) => Error::Server(format!(
            "PostgreSQL connection lost while {what}: {e} (is the server still running?)"
        )),
        _ => Error::Backend(format!("PostgreSQL error while {what}: {e}")),
    }
}

fn is_io(e: &postgres::Error) -> bool {
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// Run an `IF NOT EXISTS` DDL statement; a concurrent session creating the same object at the
/// same moment makes PostgreSQL raise a duplicate error, which means the object now exists.
pub(crate) fn create_if_missing(c: &mut Client, sql: &str) -> Result<(), postgres::Error> {
    match c.batch_execute(sql) {
        Err(e)
            if e.code()
                .is_some_and(|c| matches!(c.code(), "23505" | "42P06" | "42P07" | "42710")) =>
        {
            Ok(())
        }
        r => r,
    }
}

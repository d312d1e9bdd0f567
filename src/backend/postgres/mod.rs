//! The PostgreSQL vertical: everything the pgvector algorithms share. A table
//! `id int4 PRIMARY KEY, v vector(d) | halfvec(d)` per dataset in a schema annbench owns,
//! loaded with binary COPY and reused by fingerprint; the index build (with its timeout,
//! Ctrl-C and phases) and the plan check; the server's errors, version, settings and
//! `servers check`. Each algorithm (`pgvector/`, `pgvector_ivfflat/`, `pgvector_binary/`) only
//! implements [`PgIndex`]: its index clause, its session settings and its query.

mod build;
mod check;
mod conn;
pub mod cost;
pub mod dialect;
pub mod errors;
pub mod index;
pub mod load;
mod memory;
pub mod search;
pub mod server;
pub mod stream;
pub mod watchdog;

pub use crate::registry::decls::postgres as decl;
pub use index::{Column, PgIndex, Target};
pub use load::LoadMethod;

use super::filter::Attributes;
use super::parallel::method_label;
use super::prepared::PreparedFor;
use super::server::{Database, Version};
use super::sql::meta::{self, Meta};
use super::sql::{SqlConn, TableName, guard, reuse};
use super::table::{check_ident, check_train, check_train_within, fingerprint_hex, table_name};
use super::{
    Backend, BackendOptions, BuildReport, BuildWatch, Cancel, LoadReport, MemoryPlan, Searcher,
    ServerInfo, TableSpec,
};
use crate::connect::{ServerKind, ServerUrl};
use crate::params::Params;
use crate::{Error, Result};
use ndarray::ArrayView2;
use postgres::Client;
use std::sync::{Arc, Mutex};

/// PostgreSQL with pgvector, for the registry.
pub static DATABASE: Database = Database {
    versioned: "pgvector",
    kind: ServerKind::Postgres,
    server_info: server::server_info_at,
    check: check::check,
    privileges: check::privileges_at,
    stop_waits: Some(super::server::StopWaits {
        request: watchdog::request_stop,
        clear: watchdog::clear_stop,
    }),
    connection_limit: Some(check::connection_limit_at),
    // The admin connection, which writes the stream's rows (stream.rs), and the one that
    // cancels a statement or watches a build (build.rs).
    stream_connections: 2,
};

/// Session settings of every query connection (and of EXPLAIN). On small tables or with a
/// high `hnsw.ef_search` the planner prefers an exact sequential scan, which would benchmark
/// a full scan instead of the index; disabling it makes the planner use the vector index
/// whenever the query can use it (verify_index_used still checks the plan).
pub const SESSION_SQL: &str = "SET enable_seqscan = off";

/// The build parameter every pgvector algorithm takes.
pub use decl::MAINTENANCE_WORK_MEM;

/// The dataset currently loaded.
#[derive(Debug, Clone)]
struct Loaded {
    spec: TableSpec,
    rows: usize,
    table: TableName,
    /// Index name (unqualified; it lives in the table's schema). One per table, whichever
    /// algorithm builds it, so a build replaces any index an earlier one left.
    index: String,
    /// The filter attribute columns [`Backend::load_attributes`] added, if any.
    attrs: Option<Arc<Attributes>>,
}

/// Admin connection to PostgreSQL for one pgvector algorithm.
pub struct PgBackend {
    url: ServerUrl,
    client: Client,
    /// `client`'s socket under the [`watchdog`] (bounds the build statement).
    conn: Option<watchdog::Conn>,
    index: &'static dyn PgIndex,
    schema: String,
    pgvector: Version,
    /// Server notices since the last drain (e.g. maintenance_work_mem exceeded).
    notices: Arc<Mutex<Vec<String>>>,
    /// How [`Backend::load`] sends rows.
    pub load_method: LoadMethod,
    /// Connections used by [`Backend::load`].
    pub load_connections: usize,
    /// Longest one index build may take (enforced by the build watcher).
    pub build_timeout: Option<std::time::Duration>,
    loaded: Option<Loaded>,
    /// The build id ([`guard`]) and OID of the index the last build made.
    built: Option<(String, i64)>,
    /// The stream table's statements, while `loaded` is a stream table ([`stream`]).
    stream: Option<stream::State>,
    /// The longest one write or maintenance statement of a stream may take.
    stream_timeout: Option<std::time::Duration>,
}

/// The admin connection with its session settings, collecting the server's notices.
fn admin_session(
    url: &ServerUrl,
    notices: &Arc<Mutex<Vec<String>>>,
) -> Result<(Client, Option<watchdog::Conn>)> {
    let (mut client, conn) = server::connect_collecting(url, Arc::clone(notices))?;
    client.run(SESSION_SQL, "setting up the session")?;
    // PostgreSQL 14+: the server checks every second that this client is still there and
    // cancels a build it runs for a client that died (SIGKILL, a crash), freeing the table
    // lock with it; older servers lack the setting, and the next run's lock
    // ([`guard::lock_table`]) clears what is left.
    let _ = client.batch_execute("SET client_connection_check_interval = '1s'");
    Ok((client, conn))
}

impl PgBackend {
    /// Connect, check pgvector is enabled and new enough for `index`, create the schema.
    pub fn connect(opts: &BackendOptions, index: &'static dyn PgIndex) -> Result<Self> {
        let url = opts.url(ServerKind::Postgres)?;
        let notices = Arc::new(Mutex::new(Vec::new()));
        let (mut client, conn) = admin_session(&url, &notices)?;
        let pgvector = server::ensure_pgvector(&mut client, &url)?;
        let algo = index.algorithm();
        if !pgvector.at_least(algo.min_version) {
            let (major, minor) = algo.min_version;
            return Err(Error::Server(format!(
                "{}: pgvector {pgvector} at {url} is too old; it needs {major}.{minor} or newer \
                 (upgrade the package, then ALTER EXTENSION vector UPDATE)",
                algo.name
            )));
        }
        let schema = opts.schema()?;
        // CREATE SCHEMA needs CREATE on the database even when the schema exists (IF NOT
        // EXISTS or not): a user who may only create tables in it must not be refused.
        let schema_exists = client
            .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
            .map_err(|e| errors::postgres_error(&url, "reading the schemas", e))?
            .is_some();
        if !schema_exists {
            match client.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}")) {
                Err(e) if errors::is_duplicate(&e) => {}
                Err(e) => {
                    return Err(errors::postgres_error(
                        &url,
                        &format!("creating schema {schema}"),
                        e,
                    ));
                }
                Ok(()) => {}
            }
        }
        meta::ensure(&mut client, &schema)?;
        Ok(PgBackend {
            url,
            client,
            conn,
            index,
            schema,
            pgvector,
            notices,
            load_method: LoadMethod::default(),
            load_connections: opts.load_connections_or(load::DEFAULT_CONNECTIONS),
            build_timeout: opts.build_timeout,
            loaded: None,
            built: None,
            stream: None,
            stream_timeout: opts.build_timeout,
        })
    }

    /// Drop the table this algorithm loads for `dataset` (shared with every algorithm that
    /// stores the same column), this algorithm's stream table for it, and their metadata.
    pub fn drop_table(&mut self, dataset: &str) -> Result<()> {
        let t = self.table_name(dataset)?;
        reuse::drop_table(&mut self.client, &t)?;
        let s = super::sql::stream::table(&self.schema, self.index.algorithm().name, dataset)?;
        reuse::drop_table(&mut self.client, &s)?;
        self.loaded = None;
        self.stream = None;
        Ok(())
    }

    fn table_name(&self, dataset: &str) -> Result<TableName> {
        Ok(TableName {
            schema: self.schema.clone(),
            name: table_name(self.index.column().table_prefix(), dataset)?,
        })
    }

    fn loaded(&self) -> Result<&Loaded> {
        self.loaded.as_ref().ok_or_else(|| {
            Error::Backend(format!(
                "{}: load() must run before this step",
                self.index.algorithm().name
            ))
        })
    }

    fn target(&self, l: &Loaded) -> Target {
        Target {
            table: l.table.qualified(self.client.dialect()),
            metric: l.spec.metric,
            dimension: l.spec.dimension,
            pgvector: self.pgvector.clone(),
            attrs: l.attrs.clone(),
        }
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

    /// Refuse data the column cannot hold, before anything is sent.
    fn check_train(&self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<()> {
        super::check_dimension(self.index.algorithm(), spec.dimension)?;
        match self.index.column() {
            Column::Halfvec => check_train_within(
                train,
                spec.dimension,
                &spec.dataset,
                half::f16::MAX.to_f32(),
                index::HALFVEC_COLUMN_LIMIT,
            ),
            Column::Vector => check_train(train, spec.dimension, &spec.dataset),
        }
    }
}

impl Drop for PgBackend {
    fn drop(&mut self) {
        guard::unlock_all(&mut self.client);
    }
}

impl Backend for PgBackend {
    fn name(&self) -> &str {
        self.index.algorithm().name
    }

    fn server_info(&mut self) -> Result<ServerInfo> {
        Ok(server::server_info(&mut self.client, &self.url)?.with_transport(&self.url))
    }

    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        self.check_train(spec, train)?;
        self.loaded = None;
        self.stream = None;
        let table = self.table_name(&spec.dataset)?;
        let index = format!("{}_vidx", table.name);
        check_ident(&index, "index name")?;
        let qt = table.qualified(self.client.dialect());
        // Held by this session until it closes: no other run touches the table meanwhile.
        guard::lock_table(&mut self.client, &table)?;
        self.built = None;
        let rows = train.nrows();
        let want = Meta {
            dataset: spec.dataset.clone(),
            rows: rows as u64,
            dimension: spec.dimension as u32,
            fingerprint: fingerprint_hex(train),
            load_seconds: 0.0,
            method: String::new(),
        };
        let column = self.index.column();
        let create = format!(
            "CREATE TABLE {qt} (id int4 NOT NULL, v {} NOT NULL);
             ALTER TABLE {qt} ALTER COLUMN v SET STORAGE {};",
            column.sql(spec.dimension),
            column.storage(spec.dimension)
        );
        let (url, method, conns) = (self.url.clone(), self.load_method, self.load_connections);
        let outcome = reuse::ensure_table(&mut self.client, &table, want, &create, &mut |c| {
            let copy = load::load_rows(&url, &qt, train, method, conns)?;
            // The primary key is built after the rows are in (faster than maintaining it row
            // by row), and VACUUM sets hint bits and the visibility map now, so the first
            // index build does not pay for them inside isecs. Both count as load time.
            let t0 = std::time::Instant::now();
            c.run(
                &format!("ALTER TABLE {qt} ADD PRIMARY KEY (id)"),
                "adding the primary key",
            )?;
            c.run(&format!("VACUUM (ANALYZE) {qt}"), "vacuuming the table")?;
            let label = method_label(method.label(), conns);
            Ok((copy + t0.elapsed().as_secs_f64(), label))
        })?;
        self.drain_notices();
        self.loaded = Some(Loaded {
            spec: spec.clone(),
            rows,
            table,
            index,
            attrs: None,
        });
        Ok(LoadReport {
            seconds: outcome.meta.load_seconds,
            rows,
            reused: outcome.reused,
            table_size_bytes: self.table_size(&qt),
            method: outcome.meta.method,
        })
    }

    fn load_attributes(&mut self, attrs: &Attributes) -> Result<f64> {
        let l = self.loaded()?.clone();
        attrs.check_one_value_per_row(self.name(), l.rows)?;
        let seconds = super::sql::attrs::ensure(&mut self.client, &l.table, &attrs.columns)?;
        self.drain_notices();
        if let Some(l) = self.loaded.as_mut() {
            l.attrs = Some(Arc::new(attrs.clone()));
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
        memory::plan(self, rows, dimension, build_args)
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
        let (mut client, conn) = server::connect_watched(&self.url)?;
        client.run(SESSION_SQL, "setting up the query session")?;
        Ok(Box::new(search::PgSearcher {
            client,
            conn,
            index: self.index,
            target: self.target(l),
            attrs: l.attrs.clone(),
            args: Default::default(),
            stmt: PreparedFor::new(),
        }))
    }

    fn reconnect(&mut self) -> Result<()> {
        let (mut client, conn) = admin_session(&self.url, &self.notices)?;
        if let Some(l) = &self.loaded {
            guard::lock_table(&mut client, &l.table)?;
        }
        (self.client, self.conn) = (client, conn);
        Ok(())
    }

    fn check_index(&mut self) -> Result<()> {
        let l = self.loaded()?.clone();
        let oid = index_oid(&mut self.client, &self.schema, &l.index)?;
        let built = self.built.clone();
        guard::check_build(
            &mut self.client,
            &l.table,
            self.index.algorithm().name,
            built.as_ref().map(|(id, _)| id.as_str()),
            oid.is_some() && oid == built.as_ref().map(|(_, o)| *o),
        )
    }

    fn drop_tables(&mut self, dataset: &str) -> Result<()> {
        self.drop_table(dataset)
    }

    fn stream_table(&mut self) -> Result<&mut dyn super::stream::StreamTable> {
        Ok(self)
    }

    fn drop_index(&mut self) -> Result<()> {
        let l = self.loaded()?.clone();
        self.built = None;
        guard::clear_build(&mut self.client, &l.table)?;
        self.client.run(
            &format!("DROP INDEX IF EXISTS {}.{}", self.schema, l.index),
            "dropping the index",
        )?;
        self.drain_notices();
        Ok(())
    }
}

/// The OID of index `schema.index`, if it exists.
pub(super) fn index_oid(c: &mut Client, schema: &str, index: &str) -> Result<Option<i64>> {
    let row = c
        .query_one(
            "SELECT max(c.oid::int8) FROM pg_class c JOIN pg_namespace n \
             ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2",
            &[&schema, &index],
        )
        .map_err(|e| errors::pg_err(e, "looking up the index"))?;
    Ok(row.get(0))
}

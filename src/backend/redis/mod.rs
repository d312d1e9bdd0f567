//! The Redis vertical and its one algorithm, HNSW in a Redis 8 vector set (`VADD`, `VSIM`).
//! Per dataset, under the key prefix annbench owns (the schema option, `annbench` by
//! default): a hash `<prefix>:redis_<dataset>:rows` holding every train row (the "table"),
//! the vector set `<prefix>:redis_<dataset>` (the "index", built from the rows, see
//! [`build`] for how load and build seconds are told apart) and a metadata hash
//! `<prefix>:redis_<dataset>:meta` (fingerprint of the rows, load seconds, build id), plus
//! the filter attributes (`:attrs`, [`filter`]) and the run's lock (`:lock`, [`lock`]).
//!
//! Vector sets compare by cosine similarity only, so the algorithm declares the angular
//! metric alone and a euclidean dataset is refused before anything is sent. Every fact about
//! Redis that generic code needs is in [`decl`].

pub use crate::registry::decls::redis as decl;

pub mod build;
pub mod conn;
pub mod cost;
pub mod filter;
pub mod lock;
pub mod search;
pub mod server;

#[cfg(test)]
mod tests;

use super::server::Database;
use super::spec::Algorithm;
use super::table::{check_train, fingerprint_hex, table_name};
use super::{
    Backend, BackendOptions, BuildReport, BuildWatch, Cancel, LoadReport, Searcher, ServerInfo,
    TableSpec,
};
use crate::connect::{ServerKind, ServerUrl};
use crate::params::Params;
use crate::{Error, Result};
use conn::{READ_LIMIT, query};
use ndarray::ArrayView2;

/// Redis, for the registry.
pub static DATABASE: Database = Database {
    versioned: decl::VERSIONED,
    kind: ServerKind::Redis,
    server_info: server::server_info_at,
    check: server::check,
    privileges: server::privileges_at,
    // Every command has a read timeout (conn::READ_LIMIT); a build runs in short batches that
    // poll the stop request.
    stop_waits: None,
    connection_limit: None,
    // No streaming runbooks.
    stream_connections: 0,
};

pub static ALGORITHM: Algorithm = Algorithm {
    decl: &decl::ALGORITHM,
    database: Some(&DATABASE),
    create: |o| Ok(Box::new(Redis::connect(o)?)),
    check_data: crate::backend::table::check_data,
};

/// The keys of one dataset.
#[derive(Debug, Clone)]
pub struct Keys {
    /// The vector set.
    pub vset: String,
    /// The hash of train rows (field = row id, value = FP32 bytes).
    pub rows: String,
    /// Fingerprint, load seconds and method, build id.
    pub meta: String,
    /// The filter attributes as JSON per row id ([`filter`]).
    pub attrs: String,
    /// Held by the run that uses the dataset ([`lock`]).
    pub lock: String,
}

/// The dataset currently loaded.
#[derive(Debug, Clone)]
struct Loaded {
    spec: TableSpec,
    rows: usize,
    /// The filter attributes, once [`Backend::load_attributes`] stored them.
    attrs: Option<std::sync::Arc<super::filter::Attributes>>,
}

/// What the last build made.
#[derive(Debug, Clone)]
struct Built {
    id: String,
    /// VINFO's `vset-uid`: new for every vector set the server creates.
    uid: String,
    m: i64,
    ef: i64,
    quant: String,
    /// Whether the elements carry the filter attributes.
    with_attrs: bool,
}

/// Admin connection to Redis.
pub struct Redis {
    url: ServerUrl,
    conn: redis::Connection,
    prefix: String,
    build_timeout: Option<std::time::Duration>,
    loaded: Option<Loaded>,
    built: Option<Built>,
    /// The lock of the dataset loaded (its key and the lock).
    lock: Option<(String, lock::Lock)>,
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some((_, l)) = self.lock.take() {
            l.release(&mut self.conn);
        }
    }
}

impl Redis {
    /// Connect and check the server has vector sets (Redis >= 8.0).
    pub fn connect(opts: &BackendOptions) -> Result<Self> {
        let url = opts.url(ServerKind::Redis)?;
        let mut conn = conn::connect(&url, READ_LIMIT)?;
        server::check_version(&mut conn, &url)?;
        Ok(Redis {
            url,
            conn,
            prefix: opts.schema()?,
            build_timeout: opts.build_timeout,
            loaded: None,
            built: None,
            lock: None,
        })
    }

    /// The keys annbench keeps `dataset` in.
    pub fn keys(&self, dataset: &str) -> Result<Keys> {
        let vset = format!("{}:{}", self.prefix, table_name("redis", dataset)?);
        Ok(Keys {
            rows: format!("{vset}:rows"),
            meta: format!("{vset}:meta"),
            attrs: format!("{vset}:attrs"),
            lock: format!("{vset}:lock"),
            vset,
        })
    }

    /// Delete the rows, the vector set and the metadata annbench stored for `dataset`.
    pub fn drop_tables(&mut self, dataset: &str) -> Result<()> {
        let k = self.keys(dataset)?;
        let _: i64 = query(
            &mut self.conn,
            &self.url,
            redis::cmd("DEL")
                .arg(&k.vset)
                .arg(&k.rows)
                .arg(&k.meta)
                .arg(&k.attrs),
            "deleting the dataset's keys",
        )?;
        self.loaded = None;
        self.built = None;
        Ok(())
    }

    fn loaded(&self) -> Result<&Loaded> {
        self.loaded
            .as_ref()
            .ok_or_else(|| Error::Backend("redis: load() must run before this step".into()))
    }

    /// Why the vector set queries would run on is not the one the last build made, if so.
    fn index_problem(&mut self) -> Result<Option<String>> {
        let l = self.loaded()?.clone();
        let keys = self.keys(&l.spec.dataset)?;
        let Some(built) = self.built.clone() else {
            return Ok(Some(format!("no vector set was built on {}", keys.rows)));
        };
        let info = build::vinfo(&mut self.conn, &self.url, &keys.vset)?;
        if info.is_empty() {
            return Ok(Some(format!("the vector set {} is gone", keys.vset)));
        }
        let id: Option<String> = query(
            &mut self.conn,
            &self.url,
            redis::cmd("HGET").arg(&keys.meta).arg("build_id"),
            "reading the build id",
        )?;
        let size: u64 = info.get("size").and_then(|s| s.parse().ok()).unwrap_or(0);
        if info.get("vset-uid") != Some(&built.uid) || id.as_deref() != Some(built.id.as_str()) {
            return Ok(Some(format!(
                "the vector set {} was rebuilt (build {}, this run built {})",
                keys.vset,
                id.unwrap_or_else(|| "being made".into()),
                built.id
            )));
        }
        if size != l.rows as u64 {
            return Ok(Some(format!(
                "the vector set {} holds {size} elements; this run built {}",
                keys.vset, l.rows
            )));
        }
        Ok(None)
    }
}

impl Backend for Redis {
    fn name(&self) -> &str {
        ALGORITHM.name
    }

    fn server_info(&mut self) -> Result<ServerInfo> {
        Ok(server::server_info(&mut self.conn, &self.url)?.with_transport(&self.url))
    }

    fn load(&mut self, spec: &TableSpec, train: ArrayView2<'_, f32>) -> Result<LoadReport> {
        self.loaded = None;
        self.built = None;
        super::check_metric(&ALGORITHM, spec.metric)?;
        super::check_dimension(&ALGORITHM, spec.dimension)?;
        check_train(train, spec.dimension, &spec.dataset)?;
        let fingerprint = fingerprint_hex(train);
        let keys = self.keys(&spec.dataset)?;
        if self.lock.as_ref().is_none_or(|(k, _)| *k != keys.lock) {
            if let Some((_, l)) = self.lock.take() {
                l.release(&mut self.conn);
            }
            let l = lock::Lock::take(&mut self.conn, &self.url, &keys.lock)?;
            self.lock = Some((keys.lock.clone(), l));
        }
        let report = build::load(self, spec, train, &fingerprint)?;
        self.loaded = Some(Loaded {
            spec: spec.clone(),
            rows: train.nrows(),
            attrs: None,
        });
        Ok(report)
    }

    fn load_attributes(&mut self, attrs: &super::filter::Attributes) -> Result<f64> {
        let l = self.loaded()?.clone();
        let keys = self.keys(&l.spec.dataset)?;
        let seconds = filter::load(self, &keys, l.rows, attrs)?;
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

    fn verify_index_used(
        &mut self,
        query_vec: &[f32],
        k: usize,
        query_args: &Params,
    ) -> Result<String> {
        let l = self.loaded()?.clone();
        let args = search::QueryArgs::of(query_args, l.attrs.as_deref())?;
        let keys = self.keys(&l.spec.dataset)?;
        if let Some(why) = self.index_problem()? {
            return Err(Error::Backend(format!(
                "redis: a query with {} does not use the vector index: {why}",
                crate::params::describe(query_args)
            )));
        }
        let built = self.built.clone().expect("index_problem checks the build");
        if args.filter.is_some() && !built.with_attrs {
            return Err(Error::Backend(format!(
                "redis: a query with {} does not use the vector index: the vector set was built \
                 without the filter attributes (load_attributes ran after the build)",
                crate::params::describe(query_args)
            )));
        }
        super::table::check_query(query_vec, l.spec.dimension)?;
        let mut blob = Vec::new();
        search::fp32(query_vec, &mut blob);
        let names: Vec<Vec<u8>> = query(
            &mut self.conn,
            &self.url,
            &search::vsim(&keys.vset, &blob, k.max(1), &args),
            "querying the vector set (VSIM)",
        )?;
        let mut ids = Vec::new();
        search::parse_ids(&names, l.rows, &keys.vset, &mut ids)?;
        let filter = args.filter.as_ref().map_or_else(String::new, |f| {
            format!(
                ", FILTER '{f}' applied while the graph is walked, FILTER-EF {}",
                args.filter_ef.map_or_else(
                    || format!("{} (COUNT * 100)", 100 * k.max(1)),
                    |n| n.to_string()
                )
            )
        });
        Ok(format!(
            "vector index (VSIM on the HNSW vector set {}: M={}, ef_construction={}, quant={}, \
             {} elements{filter})",
            keys.vset,
            built.m,
            built.ef,
            build::quant_type(&built.quant),
            l.rows
        ))
    }

    fn searcher(&self) -> Result<Box<dyn Searcher>> {
        let l = self.loaded()?;
        Ok(Box::new(search::RedisSearcher {
            conn: conn::connect(&self.url, READ_LIMIT)?,
            url: self.url.clone(),
            key: self.keys(&l.spec.dataset)?.vset,
            dimension: l.spec.dimension,
            rows: l.rows,
            attrs: l.attrs.clone(),
            args: search::QueryArgs::default(),
            blob: Vec::new(),
        }))
    }

    fn drop_tables(&mut self, dataset: &str) -> Result<()> {
        Redis::drop_tables(self, dataset)
    }

    fn drop_index(&mut self) -> Result<()> {
        let l = self.loaded()?.clone();
        let keys = self.keys(&l.spec.dataset)?;
        build::drop_vset(self, &keys)
    }

    fn check_index(&mut self) -> Result<()> {
        match self.index_problem()? {
            None => Ok(()),
            Some(why) => Err(Error::Backend(format!(
                "redis: the index changed while this point was measured ({why}): another \
                 session deleted or rebuilt it. The point is not stored; run one sweep per \
                 dataset and server at a time"
            ))),
        }
    }
}

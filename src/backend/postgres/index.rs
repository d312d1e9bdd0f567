//! What one pgvector algorithm adds to the shared PostgreSQL backend ([`super::PgBackend`]):
//! the column its table stores, its `CREATE INDEX ... USING` clause, the session settings of
//! its query args, and its query. Everything else (table, load, reuse, build timeout, cancel,
//! plan check, sizes, server info) is the backend's.

use crate::Metric;
use crate::Result;
use crate::backend::args::Args;
use crate::backend::server::Version;
use crate::backend::spec::Algorithm;

/// The range a halfvec column refuses values beyond, and the fix.
pub const HALFVEC_COLUMN_LIMIT: &str = "the float16 range (+-65504) of a halfvec column; use an \
    algorithm with a float32 column, e.g. pgvector or pgvector_halfvec";

/// The type of the table's vector column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// float32 `vector(d)`; the table (`vec_<dataset>`) is shared by every algorithm using it.
    Vector,
    /// float16 `halfvec(d)`, rounded on load (`hvec_<dataset>`).
    Halfvec,
}

impl Column {
    /// SQL type of the `v` column.
    pub fn sql(self, d: usize) -> String {
        match self {
            Column::Vector => format!("vector({d})"),
            Column::Halfvec => format!("halfvec({d})"),
        }
    }

    /// How the column is stored: `PLAIN` (inline, never compressed or moved out of the row,
    /// as pgvector recommends) while a row fits in a page (8160 bytes), else `EXTERNAL`
    /// (out of line, uncompressed).
    pub fn storage(self, d: usize) -> &'static str {
        let value_bytes = 8 + d * match self {
            Column::Vector => 4,
            Column::Halfvec => 2,
        };
        // Tuple header (24 bytes) and id (4) leave 8132 bytes; keep a margin.
        if value_bytes <= 8000 {
            "PLAIN"
        } else {
            "EXTERNAL"
        }
    }

    /// Prefix of the table name.
    pub fn table_prefix(self) -> &'static str {
        match self {
            Column::Vector => "vec",
            Column::Halfvec => "hvec",
        }
    }
}

/// The loaded table an index is built and queried on.
#[derive(Debug, Clone)]
pub struct Target {
    /// Schema-qualified table name.
    pub table: String,
    pub metric: Metric,
    pub dimension: usize,
    /// The server's pgvector, for settings that only newer releases have.
    pub pgvector: Version,
    /// The filter attribute columns and conditions of the table, once loaded.
    pub attrs: Option<std::sync::Arc<crate::backend::filter::Attributes>>,
}

impl Target {
    /// ` WHERE attr < t` or ` WHERE label2 = 3` for a filtered point, else empty.
    pub fn filter(&self, args: &Args) -> String {
        crate::backend::filter::where_clause(args, self.attrs.as_deref())
    }
}

/// One pgvector algorithm.
pub trait PgIndex: Sync {
    /// Its registry declaration.
    fn algorithm(&self) -> &'static Algorithm;

    /// The column its table stores.
    fn column(&self) -> Column {
        Column::Vector
    }

    /// The `USING` clause of `CREATE INDEX`: method, indexed expression with its operator class,
    /// and `WITH` options, e.g. `hnsw (v vector_l2_ops) WITH (m = 16, ef_construction = 64)`.
    fn using(&self, t: &Target, args: &Args) -> Result<String>;

    /// `SET`/`RESET` statements applying `args` to a session (empty for none). Every query
    /// point states all its settings, so nothing carries over from the previous one.
    fn settings(&self, t: &Target, args: &Args) -> Result<String>;

    /// The query the searchers time and EXPLAIN checks: `$1` is the query vector (sent as
    /// `vector`), ids of the `k` nearest rows first.
    fn query(&self, t: &Target, k: usize, args: &Args) -> String;

    /// Where this algorithm casts or stores vectors as float16: the range its values must
    /// stay within, and the fix, for the error that refuses others ([`HALFVEC_COLUMN_LIMIT`]).
    fn float16_limit(&self) -> Option<&'static str> {
        match self.column() {
            Column::Halfvec => Some(HALFVEC_COLUMN_LIMIT),
            Column::Vector => None,
        }
    }

    /// Bytes per dimension of the vectors an HNSW build holds in `maintenance_work_mem`, for
    /// the memory plan; `None` for indexes annbench plans nothing for.
    fn graph_value_bytes(&self) -> Option<usize> {
        None
    }
}

/// The distance operator for `metric` (`<->` or `<=>`).
pub fn distance_op(metric: Metric) -> &'static str {
    match metric {
        Metric::Euclidean => "<->",
        Metric::Angular => "<=>",
    }
}

/// The operator-class suffix for `metric` (`l2` or `cosine`), e.g. `vector_l2_ops`.
pub fn ops(metric: Metric) -> &'static str {
    match metric {
        Metric::Euclidean => "l2",
        Metric::Angular => "cosine",
    }
}

pub use super::decl::{
    ITERATIVE_SCAN, ITERATIVE_SCAN_PARAM, MAX_SCAN_TUPLES, MAX_SCAN_TUPLES_PARAM,
};

/// `SET`/`RESET` of the HNSW iterative-scan settings of `args` (none before pgvector 0.8,
/// where setting one is an error naming the release).
pub fn iterative_settings(algorithm: &str, t: &Target, args: &Args) -> Result<String> {
    let scan = args.text("iterative_scan").map(str::to_string);
    let tuples = args.int("max_scan_tuples").map(|n| n.to_string());
    if t.pgvector.at_least((0, 8)) {
        return Ok(format!(
            "; {}; {}",
            set_or_reset(ITERATIVE_SCAN, scan),
            set_or_reset(MAX_SCAN_TUPLES, tuples)
        ));
    }
    if scan.as_deref().is_some_and(|s| s != "off") || tuples.is_some() {
        return Err(crate::Error::Config(format!(
            "{algorithm} query args iterative_scan and max_scan_tuples: pgvector {} has no \
             iterative scans (they came in 0.8.0); drop the arguments or upgrade",
            t.pgvector
        )));
    }
    Ok(String::new())
}

/// `SET name = value` when `value` is set, else `RESET name`.
pub fn set_or_reset(name: &str, value: Option<String>) -> String {
    match value {
        Some(v) => format!("SET {name} = {v}"),
        None => format!("RESET {name}"),
    }
}

//! How an algorithm declares itself, once: names, default grid, parameters with their types,
//! ranges and cross-rules, the server it needs, the points the contract suite runs and its
//! build cost model. Config validation, the CLI (`annbench algorithms`, `--help`), display
//! names in tables, shard balancing, Python and `docs/algorithms.md` all read these
//! declarations; the backends validate their arguments against them too (see
//! [`super::args`]), so no rule is written twice.

use super::database::ServerKind;
use super::param::{Param, Rule};
use crate::Metric;
use std::fmt;

/// Both metrics, for the algorithms that take either.
pub const ALL_METRICS: &[Metric] = &[Metric::Euclidean, Metric::Angular];

/// What an algorithm declares about itself: plain data and pure functions, in
/// `src/backend/<folder>/decl.rs` (listed in [`super::ALGORITHMS`]). Its implementation (how
/// to connect it, its checks of the data) points at it.
pub struct AlgorithmDecl {
    /// As on the CLI, in configs and in result paths, e.g. `pgvector_ivfflat`.
    pub name: &'static str,
    /// As in tables and plots, e.g. `PGVector_ivfflat`.
    pub display: &'static str,
    /// One line for `annbench algorithms`, `--help` and the docs.
    pub summary: &'static str,
    /// The database server it runs on; `None` for the in-process `exact`.
    pub database: Option<ServerKind>,
    /// The oldest release of its database's vector support it runs on: MariaDB's server
    /// version, pgvector's extension version.
    pub min_version: (u32, u32),
    /// Build parameters: one index per build point.
    pub build: &'static [Param],
    /// Query parameters: applied to every connection per query point.
    pub query: &'static [Param],
    /// Rules between parameters of one point, e.g. `ef_construction >= 2*M`.
    pub rules: &'static [Rule],
    /// The largest vector dimension its table and index take.
    pub max_dimension: usize,
    /// The metrics its index compares vectors by; a dataset of another metric is refused
    /// before anything is sent to the server ([`super::check_metric`]).
    pub metrics: &'static [Metric],
    /// The default grid, `algorithms/<name>/config.yml` (built into the binary).
    pub grid: &'static str,
    /// The points the contract suite (`tests/contract.rs`) runs this algorithm at.
    pub contract: Contract,
    /// The relative cost of one index build at these build arguments, to balance shards and
    /// plan dry runs (`shard::cost` says what the unit is); `None`: no model yet.
    pub build_cost: Option<fn(&crate::params::Params) -> f64>,
    /// When a streaming runbook (`annbench stream`) builds the index on its table, which
    /// starts empty; `None`: the algorithm runs no streaming runbooks (its backend gives no
    /// `StreamTable`).
    pub stream_build: Option<StreamBuild>,
}

/// When the index of a streaming runbook's table is built ([`AlgorithmDecl::stream_build`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamBuild {
    /// On the empty table, before the first insert: graph indexes (HNSW, MHNSW) take every
    /// row as it comes.
    BeforeFirstInsert,
    /// After the first insert step: the index is shaped by the rows already there (IVFFlat
    /// computes its lists by k-means over them; on an empty table they would be arbitrary).
    AfterFirstInsert,
}

/// Points the contract suite runs an algorithm at, as `key=value, ...` text.
#[derive(Debug, Clone, Copy)]
pub struct Contract {
    /// A quick build (a second or less on 1500 x 128 rows).
    pub build: &'static str,
    /// Query args at which recall@10 on 1500 rows must reach the suite's bound.
    pub thorough_query: &'static str,
    /// A build that takes well over 0.2 s on 4000 x 128 rows, so that the timeout and cancel
    /// scenarios stop it half-way.
    pub slow_build: &'static str,
}

impl fmt::Debug for AlgorithmDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AlgorithmDecl({})", self.name)
    }
}

//! [`PointResult`]: the one record type that is the contract between measuring (runner) and
//! reporting (tables, exports, plots, Python).

use crate::Metric;
use crate::backend::BuildPhase;
use crate::params::Params;
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One measured point: (dataset, count, algorithm, build args, query args, clients).
#[derive(Debug, Clone)]
pub struct PointResult {
    // Identity.
    pub dataset: String,
    pub distance: Metric,
    /// k, the number of neighbours asked for.
    pub count: usize,
    /// `mariadb`, `pgvector`, `pgvector_halfvec`, or an ann-benchmarks algorithm name.
    pub algorithm: String,
    pub build_args: Params,
    pub query_args: Params,
    /// Concurrent query connections.
    pub clients: usize,
    /// User label of the run, e.g. `mariadb-11.8`.
    pub label: Option<String>,
    /// Fingerprint of the data the point was measured on (train, test, the ground truth's first
    /// `count` columns and the metric; see [`crate::dataset::fingerprint`]). A stored point is
    /// reused only for data with the same fingerprint. `None` for files of earlier versions
    /// and for ann-benchmarks results.
    pub dataset_fingerprint: Option<String>,

    // Timings of the index this point ran on.
    /// Table load seconds (None for ann-benchmarks results, which do not separate it).
    pub load_seconds: Option<f64>,
    /// Index build seconds alone (isecs).
    pub build_seconds: f64,
    /// Index size in bytes from the server (ann-benchmarks stores kB of client RSS; converted).
    pub index_size_bytes: Option<u64>,
    pub table_size_bytes: Option<u64>,
    pub build_phases: Vec<BuildPhase>,

    // Raw measurements of the best pass.
    /// Returned ids, q x count, -1 where fewer than count came back.
    pub neighbors: Array2<i64>,
    /// Distances of returned ids recomputed by the client from the train vectors, q x count.
    pub distances: Array2<f32>,
    /// Per-query latency in seconds (all clients merged), in query order.
    pub latencies: Vec<f64>,
    /// Every timed pass, best first not implied (in run order).
    pub passes: Vec<Pass>,

    /// Metrics derived from the raw data and exact ground truth.
    pub metrics: PointMetrics,
    pub environment: Environment,
}

/// One timed pass over all test queries.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pass {
    /// Wall-clock seconds from the first query sent to the last answer received.
    pub wall_seconds: f64,
    pub queries: usize,
    /// Client process CPU seconds during the pass (to show a client bottleneck).
    pub client_cpu_seconds: Option<f64>,
}

/// Metrics of one point.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PointMetrics {
    /// k-nn recall (ann-benchmarks rule, +1e-3 tolerance).
    pub recall: f64,
    /// epsilon recall (ann-benchmarks rule, 1% tolerance).
    pub epsilon_recall: f64,
    /// Queries / wall seconds of the best pass.
    pub qps: f64,
    /// QPS of every pass, in run order (the spread).
    pub qps_passes: Vec<f64>,
    pub latency_mean: f64,
    pub latency_p50: f64,
    pub latency_p95: f64,
    pub latency_p99: f64,
    pub latency_p999: f64,
}

/// Where and with what the point was measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub annbench_version: String,
    pub server_version: String,
    pub server_settings: BTreeMap<String, String>,
    pub cpu_model: String,
    pub cpu_cores: usize,
    pub ram_bytes: u64,
    /// RFC 3339 UTC time the point finished.
    pub finished_at: String,
    /// Warnings raised while measuring (client bottleneck, build notices...).
    pub notices: Vec<String>,
    /// The command line of the process that measured the point, passwords masked (empty in
    /// files written before annbench recorded it).
    #[serde(default)]
    pub command: String,
}

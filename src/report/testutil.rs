//! Point constructors for unit tests (no store, no server).

use crate::Metric;
use crate::params::Params;
use crate::results::{Environment, PointMetrics, PointResult};
use ndarray::Array2;

/// `{"M": m, "ef_construction": efc}` style maps from pairs.
pub fn params(pairs: &[(&str, i64)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect()
}

/// A point of `algorithm` with the given args, recall and QPS; other metrics derived simply.
pub fn point(
    algorithm: &str,
    build: &[(&str, i64)],
    query: &[(&str, i64)],
    recall: f64,
    qps: f64,
) -> PointResult {
    PointResult {
        dataset: "test-10-euclidean".into(),
        distance: Metric::Euclidean,
        count: 10,
        algorithm: algorithm.into(),
        build_args: params(build),
        query_args: params(query),
        clients: 1,
        label: None,
        dataset_fingerprint: None,
        load_seconds: Some(2.0),
        build_seconds: 10.0,
        index_size_bytes: Some(5_000_000),
        table_size_bytes: Some(8_000_000),
        build_phases: Vec::new(),
        neighbors: Array2::zeros((0, 10)),
        distances: Array2::zeros((0, 10)),
        latencies: Vec::new(),
        passes: Vec::new(),
        metrics: PointMetrics {
            recall,
            epsilon_recall: recall,
            qps,
            qps_best: qps,
            passes: 1,
            qps_passes: vec![qps],
            latency_mean: 1.0 / qps,
            latency_p50: 1.0 / qps,
            latency_p95: 1.5 / qps,
            latency_p99: 2.0 / qps,
            latency_p999: 3.0 / qps,
            ..PointMetrics::default()
        },
        environment: Environment::default(),
    }
}

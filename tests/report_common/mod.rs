//! Shared by the `report_*` tests: in-memory points (no store, no server) and golden files.

#![allow(dead_code)]

use annbench::Metric;
use annbench::params::Params;
use annbench::results::{Environment, Pass, PointMetrics, PointResult};
use annbench::runner::assess;
use ndarray::Array2;
use std::path::PathBuf;

/// Parameters from (name, integer) pairs, in order.
pub fn params(pairs: &[(&str, i64)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect()
}

/// Pass QPS of [`pt`] as shares of its figure: median 1, interval [0.99, 1.01] (6 passes).
pub const SPREAD: [f64; 6] = [0.99, 1.0, 1.005, 0.995, 1.01, 1.0];

/// A point of `algorithm` on dataset `glove-25-angular`, k = 10, one client, no label.
/// Latencies follow from QPS (mean = 1/qps) so every metric has a distinct, checkable value;
/// six passes of 1,000 queries spread +-1% around `qps` (see [`SPREAD`]).
pub fn pt(
    algorithm: &str,
    build: &[(&str, i64)],
    query: &[(&str, i64)],
    recall: f64,
    qps: f64,
) -> PointResult {
    PointResult {
        dataset: "glove-25-angular".into(),
        distance: Metric::Angular,
        count: 10,
        algorithm: algorithm.into(),
        build_args: params(build),
        query_args: params(query),
        clients: 1,
        label: None,
        dataset_fingerprint: None,
        load_seconds: Some(3.5),
        build_seconds: 10.0,
        index_size_bytes: Some(12_345_678),
        table_size_bytes: Some(40_000_000),
        build_phases: Vec::new(),
        neighbors: Array2::zeros((0, 10)),
        distances: Array2::zeros((0, 10)),
        latencies: Vec::new(),
        passes: SPREAD
            .iter()
            .map(|s| Pass {
                wall_seconds: 1000.0 / (qps * s),
                queries: 1000,
                client_cpu_seconds: Some(0.25 * 1000.0 / qps),
                ..Pass::default()
            })
            .collect(),
        metrics: PointMetrics {
            recall,
            epsilon_recall: (recall + 0.001).min(1.0),
            qps,
            qps_ci_low: Some(qps * 0.99),
            qps_ci_high: Some(qps * 1.01),
            qps_ci_level: Some(1.0 - 2.0 / 64.0),
            qps_best: qps * 1.01,
            qps_cv: Some(0.0068),
            passes: 6,
            qps_passes: SPREAD.iter().map(|s| qps * s).collect(),
            latency_mean: 1.0 / qps,
            latency_p50: 0.9 / qps,
            latency_p95: 1.5 / qps,
            latency_p99: 2.0 / qps,
            latency_p999: 3.0 / qps,
            ..PointMetrics::default()
        },
        environment: Environment::default(),
    }
}

/// The point with these passes (QPS of 1,000-query passes; `heavy`: measured under heavy
/// interference) and the figures the runner derives from them.
pub fn with_passes(mut p: PointResult, qps: &[f64], heavy: &[bool]) -> PointResult {
    use annbench::results::Interference;
    p.passes = qps
        .iter()
        .enumerate()
        .map(|(i, q)| Pass {
            wall_seconds: 1000.0 / q,
            queries: 1000,
            interference: heavy
                .get(i)
                .copied()
                .unwrap_or(false)
                .then_some(Interference {
                    heavy: true,
                    ..Interference::default()
                }),
            ..Pass::default()
        })
        .collect();
    assess::mark_stalls(&mut p.passes);
    let f = choose_passes_and_set_qps(&mut p, qps.len());
    p.metrics.qps_cv = f.cv;
    p.metrics.flags = f.flags;
    p
}

/// Choose the passes of `p` the runner would use (`runs` undisturbed ones per build, else
/// all) and set its QPS, interval, best pass, pass count and per-pass QPS from them; the
/// figures are returned for a caller that wants more of them (the CV, the flags).
pub fn choose_passes_and_set_qps(p: &mut PointResult, runs: usize) -> assess::Figures {
    assess::choose(&mut p.passes, runs);
    let f = assess::figures(&p.passes);
    let m = &mut p.metrics;
    m.qps = f.qps;
    m.qps_ci_low = f.interval.map(|i| i.low);
    m.qps_ci_high = f.interval.map(|i| i.high);
    m.qps_ci_level = f.interval.map(|i| i.level);
    m.qps_best = f.best;
    m.passes = f.used;
    m.qps_passes = p.passes.iter().map(Pass::qps).collect();
    f
}

/// The point with its build seconds set.
pub fn built(mut p: PointResult, seconds: f64) -> PointResult {
    p.build_seconds = seconds;
    p
}

/// The point with a label.
pub fn labelled(mut p: PointResult, label: &str) -> PointResult {
    p.label = Some(label.into());
    p
}

/// The point measured with `n` clients.
pub fn with_clients(mut p: PointResult, n: usize) -> PointResult {
    p.clients = n;
    p
}

/// Compare `actual` with `tests/golden/<name>` exactly. With `UPDATE_GOLDEN=1` the file is
/// (re)written instead; review the diff before committing.
pub fn assert_golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{name} differs from the golden file\n--- expected\n{expected}\n--- actual\n{actual}"
    );
}

//! Reading ann-benchmarks' own result files into [`PointResult`]s, so their published runs
//! sit next to ours in tables and plots. Their metrics are recomputed here with the same
//! recall rules from the dataset's exact ground truth.

use super::h5util::{read_attr_bool, read_attr_f64, read_attr_str};
use super::{Environment, PointMetrics, PointResult};
use crate::dataset::GroundTruth;
use crate::params::Params;
use crate::{Error, Result, metrics};
use std::path::Path;

/// Notices attached to every point read from ann-benchmarks.
const NOTICES: [&str; 3] = [
    "ann-benchmarks result: QPS is 1 / best mean latency (their definition), not measured wall-clock throughput",
    "ann-benchmarks result: index_size is the client's RSS growth in kB (client-side), not the server's index size",
    "ann-benchmarks result: build time may include loading the data",
];

/// Whether an ann-benchmarks file was written in batch mode (those are skipped by the reader).
pub fn is_batch(file: &hdf5::File) -> bool {
    read_attr_bool(file, "batch_mode").unwrap_or(false)
}

/// Read an ann-benchmarks result file; `truth` is the dataset's exact ground truth.
pub fn read_ann_benchmarks(
    path: &Path,
    file: &hdf5::File,
    truth: &GroundTruth,
) -> Result<PointResult> {
    let err = |e: hdf5::Error| {
        Error::Results(format!(
            "cannot read ann-benchmarks result {}: {e}",
            path.display()
        ))
    };
    let count = read_attr_f64(file, "count").map_err(err)? as usize;
    let algorithm = read_attr_str(file, "algo").map_err(err)?;
    let name = read_attr_str(file, "name").map_err(err)?;
    let dataset = read_attr_str(file, "dataset").map_err(err)?;
    let distance = read_attr_str(file, "distance").map_err(err)?.parse()?;
    let build_seconds = read_attr_f64(file, "build_time").map_err(err)?;
    let index_kb = read_attr_f64(file, "index_size").ok();
    let best_search_time = read_attr_f64(file, "best_search_time").map_err(err)?;
    let latencies = file
        .dataset("times")
        .and_then(|d| d.read_raw::<f64>())
        .map_err(err)?;
    let neighbors = file
        .dataset("neighbors")
        .and_then(|d| d.read_2d::<i64>())
        .map_err(err)?;
    let distances = file
        .dataset("distances")
        .and_then(|d| d.read_2d::<f32>())
        .map_err(err)?;
    let rules = |f: fn(_, _, usize) -> Option<f64>| {
        f(truth.distances.view(), distances.view(), count).ok_or_else(|| {
            Error::Results(format!(
                "{}: ground truth has {} neighbours per query and {} rows, the result asks for {count} \
                 neighbours over {} queries; recompute the ground truth with a larger k",
                path.display(),
                truth.distances.ncols(),
                truth.distances.nrows(),
                distances.nrows()
            ))
        })
    };
    let recall = rules(metrics::knn_recall)?;
    let epsilon_recall = rules(metrics::epsilon_recall)?;
    let qps = if best_search_time > 0.0 {
        1.0 / best_search_time
    } else {
        0.0
    };
    let lat = metrics::summarize_latencies([&latencies[..]]);
    let mut build_args = Params::new();
    build_args.insert("ann_benchmarks_name".into(), name.into());
    Ok(PointResult {
        dataset,
        distance,
        count,
        algorithm,
        build_args,
        query_args: Params::new(),
        clients: 1,
        label: None,
        dataset_fingerprint: None,
        load_seconds: None,
        build_seconds,
        index_size_bytes: index_kb.map(|kb| (kb * 1024.0).round() as u64),
        table_size_bytes: None,
        build_phases: Vec::new(),
        neighbors,
        distances,
        // ann-benchmarks does not record wall-clock passes: none are invented here.
        passes: Vec::new(),
        latencies,
        metrics: PointMetrics {
            recall,
            epsilon_recall,
            qps,
            qps_best: qps,
            passes: 1,
            qps_passes: vec![qps],
            latency_mean: lat.mean,
            latency_p50: lat.p50,
            latency_p95: lat.p95,
            latency_p99: lat.p99,
            latency_p999: lat.p999,
            recall_rule: Some(metrics::KNN_RULE.to_string()),
            ..PointMetrics::default()
        },
        environment: Environment {
            notices: NOTICES.iter().map(|s| s.to_string()).collect(),
            ..Environment::default()
        },
    })
}

//! `run_stream`: a streaming runbook (`annbench stream`) from Python, on a thread of its own
//! with the GIL released (see [`super::sweep::detached`]); returns the JSON rows of
//! [`crate::report::stream::stream_table`], and `stream_results` reads the stored ones.

use super::errors::IntoPyResult;
use super::sweep::{PyProgress, detached, server_urls};
use crate::report::render;
use crate::report::stream::stream_table;
use crate::runner::stream::{self, StreamOptions};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Runs `runbook` (entry `entry`, or the one named like the dataset) against `algorithm` and
/// returns one JSON row per step (and query point at a search step).
#[pyfunction]
#[pyo3(signature = (dataset, runbook, algorithm, entry=None, config=None, build=Vec::new(), query=Vec::new(), count=10, runs=5, min_time=0.3, max_time=None, clients=1, batch=stream::DEFAULT_BATCH, markers=stream::DEFAULT_MARKERS, results=PathBuf::from("results"), data_dir=None, force=false, label=None, timeout=None, servers=BTreeMap::new(), callback=None))]
#[allow(clippy::too_many_arguments)]
pub fn run_stream(
    py: Python<'_>,
    dataset: String,
    runbook: PathBuf,
    algorithm: String,
    entry: Option<String>,
    config: Option<PathBuf>,
    build: Vec<String>,
    query: Vec<String>,
    count: usize,
    runs: usize,
    min_time: f64,
    max_time: Option<f64>,
    clients: usize,
    batch: usize,
    markers: usize,
    results: PathBuf,
    data_dir: Option<PathBuf>,
    force: bool,
    label: Option<String>,
    timeout: Option<f64>,
    servers: BTreeMap<String, String>,
    callback: Option<Py<PyAny>>,
) -> PyResult<String> {
    let seconds = |v: f64, what: &str| {
        Duration::try_from_secs_f64(v).map_err(|_| {
            super::errors::to_py(crate::Error::Config(format!(
                "{what} must be a number of seconds (zero or more)"
            )))
        })
    };
    let timeout = match timeout {
        Some(t) if t.is_nan() || t <= 0.0 => {
            return Err(super::errors::to_py(crate::Error::Config(
                "timeout must be a positive number of seconds".into(),
            )));
        }
        Some(t) => Some(seconds(t, "timeout")?),
        None => None,
    };
    let algorithm = crate::backend::find_algorithm(&algorithm)
        .map_err(super::errors::to_py)?
        .name
        .to_string();
    let mut backend = server_urls(servers)?;
    backend.build_timeout = timeout;
    let opts = StreamOptions {
        dataset,
        data_dir: data_dir.unwrap_or_else(crate::dataset::default_data_dir),
        runbook,
        entry,
        algorithm,
        config_file: config,
        build_overrides: build,
        query_overrides: query,
        count,
        runs,
        min_time: seconds(min_time, "min_time")?,
        max_time: max_time.map(|t| seconds(t, "max_time")).transpose()?,
        clients,
        batch,
        markers,
        results_dir: results,
        force,
        label,
        timeout,
        backend,
    };
    let progress = PyProgress::new(callback);
    let job = || {
        let summary = stream::run_stream(&opts, &progress)?;
        let runs: Vec<_> = summary.runs.into_iter().map(|o| o.run).collect();
        render::to_json(&stream_table(&runs))
    };
    detached(py, &progress, &opts.results_dir, job)
}

/// The stored streaming runs of (`dataset`, `count`) as JSON rows of
/// [`crate::report::stream::stream_table`].
#[pyfunction]
#[pyo3(signature = (dataset, count=10, results=PathBuf::from("results")))]
pub fn stream_results(dataset: String, count: usize, results: PathBuf) -> PyResult<String> {
    let key = crate::results::dataset_key(&dataset);
    let runs = crate::results::stream::load_streams(&results, &key, count).py_err()?;
    render::to_json(&stream_table(&runs)).py_err()
}

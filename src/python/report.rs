//! Reports over the result store, returned as JSON records (the report module's own JSON
//! rendering), which the package turns into DataFrames. One loader, five reports.

use super::errors::IntoPyResult;
use crate::report::{self, render};
use crate::results::{self, PointResult};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

fn load(
    dataset: &str,
    count: usize,
    results_dir: &Path,
    data_dir: Option<PathBuf>,
) -> crate::Result<Vec<PointResult>> {
    let data_dir = data_dir.unwrap_or_else(crate::dataset::default_data_dir);
    results::load_points(
        results_dir,
        &results::dataset_key(dataset),
        count,
        &data_dir,
    )
}

fn records(table: &render::Table) -> crate::Result<String> {
    render::to_json(table)
}

/// Every stored point of (`dataset`, `count`) with every metric, one `param_*` column per
/// parameter: the rows of `annbench.results()`.
#[pyfunction]
#[pyo3(signature = (dataset, count=10, results="results".into(), data_dir=None))]
pub fn export_json(
    py: Python<'_>,
    dataset: String,
    count: usize,
    results: PathBuf,
    data_dir: Option<PathBuf>,
) -> PyResult<String> {
    py.detach(move || {
        records(&report::export_table(&load(
            &dataset, count, &results, data_dir,
        )?))
    })
    .py_err()
}

/// Best QPS at each recall threshold per algorithm (and label, clients), with `vs_base`
/// ratios when `base` names an algorithm; `stat` is `median` or `best`.
#[pyfunction]
#[pyo3(signature = (dataset, count=10, recall=report::DEFAULT_THRESHOLDS.to_vec(), base=None, results="results".into(), data_dir=None, stat="median".to_string()))]
#[allow(clippy::too_many_arguments)]
pub fn table_json(
    py: Python<'_>,
    dataset: String,
    count: usize,
    recall: Vec<f64>,
    base: Option<String>,
    results: PathBuf,
    data_dir: Option<PathBuf>,
    stat: String,
) -> PyResult<String> {
    py.detach(move || {
        let stat: report::Stat = stat.parse()?;
        let mut points = load(&dataset, count, &results, data_dir)?;
        report::apply_stat(&mut points, stat);
        records(&report::best_at_recall(&points, &recall, base.as_deref())?.to_table())
    })
    .py_err()
}

/// Relative QPS of the runs labelled `me` against `base`. With one label and `matrix`
/// false: the JSON of `annbench compare --format json` (`{"pairs": [...], "summary": [...],
/// "pairing": {...}, "settings_differ": [...], "notes": [...], ...}`); with `matrix` true
/// (any number of labels): the JSON of the matrix (`{"cells": [...], ...}`, as `annbench
/// compare --me A --me B --format json`).
#[pyfunction]
#[pyo3(signature = (base, me, dataset, count=10, recall=report::DEFAULT_THRESHOLDS.to_vec(), results="results".into(), data_dir=None, noise=report::compare::DEFAULT_NOISE, stat="median".to_string(), judge_disturbed=false, paired_noise=report::paired::DEFAULT_PAIRED_NOISE, matrix=false))]
#[allow(clippy::too_many_arguments)]
pub fn compare_json(
    py: Python<'_>,
    base: String,
    me: Vec<String>,
    dataset: String,
    count: usize,
    recall: Vec<f64>,
    results: PathBuf,
    data_dir: Option<PathBuf>,
    noise: f64,
    stat: String,
    judge_disturbed: bool,
    paired_noise: f64,
    matrix: bool,
) -> PyResult<String> {
    py.detach(move || {
        let stat: report::Stat = stat.parse()?;
        let mut points = load(&dataset, count, &results, data_dir)?;
        report::apply_stat(&mut points, stat);
        let opts = report::CompareOptions {
            thresholds: recall,
            noise,
            paired_noise,
            stat,
            judge_disturbed,
            ..report::CompareOptions::default()
        };
        match (me.as_slice(), matrix) {
            ([one], false) => {
                render::json_pretty(&report::compare_with(&points, &base, one, &opts)?.to_json())
            }
            (_, false) => Err(crate::Error::Config(format!(
                "compare_json: {} labels in me without matrix=True: give one label, or ask \
                 for the matrix",
                me.len()
            ))),
            (_, true) => {
                render::json_pretty(&report::matrix(&points, &base, &me, &opts)?.to_json())
            }
        }
    })
    .py_err()
}

/// One row per built index: build seconds, index and table sizes, load seconds.
#[pyfunction]
#[pyo3(signature = (dataset, count=10, results="results".into(), data_dir=None))]
pub fn build_json(
    py: Python<'_>,
    dataset: String,
    count: usize,
    results: PathBuf,
    data_dir: Option<PathBuf>,
) -> PyResult<String> {
    py.detach(move || {
        let points = load(&dataset, count, &results, data_dir)?;
        let rows = report::build_table(&points);
        records(&report::build_table::build_rows_table(
            &rows,
            report::series::Distinct::of(&points),
        ))
    })
    .py_err()
}

/// QPS vs clients at fixed parameters, for parameter sets run with two or more client counts.
#[pyfunction]
#[pyo3(signature = (dataset, count=10, results="results".into(), data_dir=None))]
pub fn clients_json(
    py: Python<'_>,
    dataset: String,
    count: usize,
    results: PathBuf,
    data_dir: Option<PathBuf>,
) -> PyResult<String> {
    py.detach(move || {
        let points = load(&dataset, count, &results, data_dir)?;
        let groups = report::clients_table(&points);
        records(&report::clients::clients_rows_table(&groups, true))
    })
    .py_err()
}

/// Writes the self-contained HTML report of (`dataset`, `count`) to `output`; returns the
/// number of points it shows.
#[pyfunction]
#[pyo3(signature = (dataset, output="report.html".into(), count=10, recall=report::DEFAULT_THRESHOLDS.to_vec(), base=None, label=None, clients=None, title=None, results="results".into(), data_dir=None))]
#[allow(clippy::too_many_arguments)]
pub fn report_html(
    py: Python<'_>,
    dataset: String,
    output: PathBuf,
    count: usize,
    recall: Vec<f64>,
    base: Option<String>,
    label: Option<String>,
    clients: Option<usize>,
    title: Option<String>,
    results: PathBuf,
    data_dir: Option<PathBuf>,
) -> PyResult<usize> {
    py.detach(move || {
        let points = load(&dataset, count, &results, data_dir)?;
        if points.is_empty() {
            return Err(crate::Error::Results(format!(
                "no results for dataset '{}' with k={count} in {}: run a sweep first \
                 (annbench.run), or pass results= (and count=) of the runs to report",
                results::dataset_key(&dataset),
                results.display()
            )));
        }
        let points = report::select::select(points, label.as_deref(), clients)?;
        let n = points.len();
        let options = report::html::ReportOptions {
            thresholds: recall,
            base_label: base,
            title,
            command: Some(format!(
                "annbench.report({:?}, results={:?})",
                dataset,
                results.display().to_string()
            )),
            streams: crate::results::stream::load_streams(
                &results,
                &results::dataset_key(&dataset),
                count,
            )?,
        };
        let html = report::html::html_report(points, &options)?;
        report::html::write_report(&output, &html)?;
        Ok(n)
    })
    .py_err()
}

#[cfg(test)]
mod tests {
    use crate::results::dataset_key;

    #[test]
    fn dataset_key_is_name_or_file_stem() {
        assert_eq!(dataset_key("glove-25-angular"), "glove-25-angular");
        assert_eq!(dataset_key("data/x-2-euclidean.hdf5"), "x-2-euclidean");
        assert_eq!(dataset_key("x.hdf5"), "x");
    }
}

/// The registry of metrics ([`crate::report::metrics`]) as JSON records: name, title,
/// description, unit, format, group, tip_line and plot (the axis of `annbench.plot.METRICS`).
#[pyfunction]
pub fn metrics_json() -> PyResult<String> {
    serde_json::to_string(&report::metrics::to_json())
        .map_err(|e| super::errors::to_py(crate::Error::Results(format!("cannot write JSON: {e}"))))
}

/// The series of labelled runs and its change points: the JSON of `annbench history --format
/// json` (`{"elements": [...], "lines": [...], "change_points": [...], ...}`).
#[pyfunction]
#[pyo3(signature = (dataset, count=10, series=Vec::new(), order=None, base=None, algorithms=Vec::new(), recall=report::history::DEFAULT_THRESHOLDS.to_vec(), window=report::history::DEFAULT_WINDOW, max_pvalue=crate::metrics::changepoint::DEFAULT_MAX_PVALUE, min_magnitude=report::history::DEFAULT_MIN_MAGNITUDE, hosts_any=false, results="results".into(), data_dir=None))]
#[allow(clippy::too_many_arguments)]
pub fn history_json(
    py: Python<'_>,
    dataset: String,
    count: usize,
    series: Vec<String>,
    order: Option<String>,
    base: Option<String>,
    algorithms: Vec<String>,
    recall: Vec<f64>,
    window: usize,
    max_pvalue: f64,
    min_magnitude: f64,
    hosts_any: bool,
    results: PathBuf,
    data_dir: Option<PathBuf>,
) -> PyResult<String> {
    use report::history::{HistoryOptions, order::Order};
    py.detach(move || {
        let order = match order.as_deref() {
            None => Order::default_for(&series),
            Some(o) => o.parse().map_err(crate::Error::Config)?,
        };
        let opts = HistoryOptions {
            series,
            order,
            base,
            algorithms,
            thresholds: recall,
            change: crate::metrics::changepoint::Options {
                window,
                max_pvalue,
                min_magnitude,
            },
            hosts_any,
        };
        let points = load(&dataset, count, &results, data_dir)?;
        render::json_pretty(&report::history::history(&points, &opts)?.json())
    })
    .py_err()
}

/// The change points of one series of numbers by Apache Otava's method, with Otava's options
/// and defaults (window 50): `[{"index", "mean_before", "stddev_before", "mean_after",
/// "stddev_after", "forward_change_percent", "magnitude", "pvalue"}]`.
#[pyfunction]
#[pyo3(signature = (values, window=crate::metrics::changepoint::DEFAULT_WINDOW, max_pvalue=crate::metrics::changepoint::DEFAULT_MAX_PVALUE, min_magnitude=0.0))]
pub fn change_points_json(
    values: Vec<f64>,
    window: usize,
    max_pvalue: f64,
    min_magnitude: f64,
) -> PyResult<String> {
    use crate::metrics::changepoint::{Options, change_points};
    let run = || -> crate::Result<String> {
        let bad = |what: String| Err(crate::Error::Config(format!("change_points: {what}")));
        if window < 2 {
            return bad(format!("window={window}: give 2 or more"));
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return bad(format!(
                "values[{i}] is {}: every value must be a finite number",
                values[i]
            ));
        }
        if !(max_pvalue > 0.0 && max_pvalue <= 1.0) {
            return bad(format!(
                "max_pvalue={max_pvalue}: give a probability above 0 and at most 1"
            ));
        }
        if !(min_magnitude.is_finite() && min_magnitude >= 0.0) {
            return bad(format!(
                "min_magnitude={min_magnitude}: give a share of 0 or more"
            ));
        }
        let opts = Options {
            window,
            max_pvalue,
            min_magnitude,
        };
        let out: Vec<serde_json::Value> = change_points(&values, opts)
            .iter()
            .map(|c| {
                serde_json::json!({
                    "index": c.index,
                    "mean_before": c.stats.mean_before,
                    "stddev_before": c.stats.stddev_before,
                    "mean_after": c.stats.mean_after,
                    "stddev_after": c.stats.stddev_after,
                    "forward_change_percent": c.stats.forward_change() * 100.0,
                    "magnitude": c.stats.magnitude(),
                    "pvalue": c.stats.pvalue,
                })
            })
            .collect();
        render::json_pretty(&serde_json::Value::Array(out))
    };
    run().py_err()
}

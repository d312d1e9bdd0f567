//! Sweep events as plain dicts for the Python progress callback: `{"kind": "point_started",
//! ...}`. Parameters are given as their `a=1, b=2` description (as in point names).

use crate::params::{Params, describe};
use crate::results::PointResult;
use crate::runner::Event;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

/// The dict for one event; `kind` is the snake_case event name.
pub fn to_dict<'py>(py: Python<'py>, event: &Event<'_>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match event {
        Event::GroundTruth { queries, k } => {
            d.set_item("kind", "ground_truth")?;
            d.set_item("queries", queries)?;
            d.set_item("k", k)?;
        }
        Event::GroundTruthProgress { done, total } => {
            d.set_item("kind", "ground_truth_progress")?;
            d.set_item("done", done)?;
            d.set_item("total", total)?;
        }
        Event::BuildProgress {
            algorithm,
            build_args,
            phase,
            percent,
            elapsed_seconds,
        } => {
            build(&d, "build_progress", algorithm, build_args)?;
            d.set_item("phase", phase)?;
            d.set_item("percent", percent)?;
            d.set_item("elapsed_seconds", elapsed_seconds)?;
        }
        Event::MemoryPlanned { plan } => {
            d.set_item("kind", "memory_planned")?;
            d.set_item("algorithm", &plan.algorithm)?;
            d.set_item("what", &plan.what)?;
            d.set_item("need_bytes", plan.need_bytes)?;
            d.set_item("setting", &plan.setting)?;
            d.set_item("setting_bytes", plan.setting_bytes)?;
            d.set_item("fits", plan.fits())?;
            d.set_item("message", plan.describe())?;
        }
        Event::SweepStarted {
            algorithms,
            builds,
            points,
        } => {
            d.set_item("kind", "sweep_started")?;
            d.set_item("algorithms", algorithms)?;
            d.set_item("builds", builds)?;
            d.set_item("points", points)?;
        }
        Event::AlgorithmStarted {
            algorithm,
            builds,
            points,
        } => {
            d.set_item("kind", "algorithm_started")?;
            d.set_item("algorithm", algorithm)?;
            d.set_item("builds", builds)?;
            d.set_item("points", points)?;
        }
        Event::LoadStarted { algorithm, rows } => {
            d.set_item("kind", "load_started")?;
            d.set_item("algorithm", algorithm)?;
            d.set_item("rows", rows)?;
        }
        Event::LoadFinished { algorithm, report } => {
            d.set_item("kind", "load_finished")?;
            d.set_item("algorithm", algorithm)?;
            d.set_item("seconds", report.seconds)?;
            d.set_item("rows", report.rows)?;
            d.set_item("reused", report.reused)?;
            d.set_item("method", &report.method)?;
        }
        Event::BuildStarted {
            algorithm,
            build_args,
        } => {
            build(&d, "build_started", algorithm, build_args)?;
        }
        Event::BuildFinished {
            algorithm,
            build_args,
            report,
        } => {
            build(&d, "build_finished", algorithm, build_args)?;
            d.set_item("seconds", report.seconds)?;
            d.set_item("index_size_bytes", report.index_size_bytes)?;
            d.set_item("notices", &report.notices)?;
        }
        Event::BuildSkipped {
            algorithm,
            build_args,
        } => {
            build(&d, "build_skipped", algorithm, build_args)?;
        }
        Event::PointStarted {
            algorithm,
            build_args,
            query_args,
            clients,
            queries,
            runs,
        } => {
            build(&d, "point_started", algorithm, build_args)?;
            d.set_item("query_args", describe(query_args))?;
            d.set_item("clients", clients)?;
            d.set_item("queries", queries)?;
            d.set_item("runs", runs)?;
        }
        Event::MeasureStarted {
            algorithm,
            build_args,
            points,
            passes,
        } => {
            build(&d, "measure_started", algorithm, build_args)?;
            d.set_item("points", points)?;
            d.set_item("passes", passes)?;
        }
        Event::PassFinished {
            algorithm,
            query_args,
            clients,
            kind,
            qps,
            seconds,
            heavy,
        } => {
            d.set_item("kind", "pass_finished")?;
            d.set_item("algorithm", algorithm)?;
            d.set_item("query_args", describe(query_args))?;
            d.set_item("clients", clients)?;
            d.set_item("pass", kind.as_str())?;
            d.set_item("qps", qps)?;
            d.set_item("seconds", seconds)?;
            d.set_item("interference", heavy)?;
        }
        Event::PointFinished { point, path } => point_item(&d, "point_finished", point, path)?,
        Event::PointSkipped { point, path } => point_item(&d, "point_skipped", point, path)?,
        Event::StreamStep { record, path } => {
            d.set_item("kind", "stream_step")?;
            d.set_item("step", record.step)?;
            d.set_item("operation", &record.operation)?;
            d.set_item("live_rows", record.live_rows)?;
            d.set_item("path", path.display().to_string())?;
        }
        Event::Warning(text) => {
            d.set_item("kind", "warning")?;
            d.set_item("message", text)?;
        }
    }
    Ok(d)
}

fn build(d: &Bound<'_, PyDict>, kind: &str, algorithm: &str, args: &Params) -> PyResult<()> {
    d.set_item("kind", kind)?;
    d.set_item("algorithm", algorithm)?;
    d.set_item("build_args", describe(args))
}

fn point_item(d: &Bound<'_, PyDict>, kind: &str, p: &PointResult, path: &Path) -> PyResult<()> {
    build(d, kind, &p.algorithm, &p.build_args)?;
    d.set_item("query_args", describe(&p.query_args))?;
    d.set_item("clients", p.clients)?;
    let m = &p.metrics;
    d.set_item("recall", m.recall)?;
    d.set_item("qps", m.qps)?;
    d.set_item("qps_ci_low", m.qps_ci_low)?;
    d.set_item("qps_ci_high", m.qps_ci_high)?;
    d.set_item("passes", m.passes)?;
    let flags: Vec<&str> = m.flags.iter().map(|f| f.as_str()).collect();
    d.set_item("flags", flags)?;
    d.set_item("path", path)
}

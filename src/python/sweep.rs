//! `run_sweep`: the sweep of `annbench run`, with progress events sent to a Python callback.
//!
//! The sweep runs on a thread of its own with the GIL released. Events arrive on the sweep's
//! coordinating thread (never on a client thread, so a slow callback cannot stall a measured
//! query); the GIL is taken only to deliver them, with `PassFinished` thinned to ten per
//! second at most. The calling thread checks Python's signals every 100 ms, so Ctrl-C (a
//! KeyboardInterrupt) stops the sweep at its next poll even while a driver call waits on a
//! server that stopped answering: such waits end within their database's bound (a driver's
//! read timeout, or the grace of [`crate::backend::request_stop`]). An exception in the
//! callback stops it too; every point stored so far stays on disk.

use super::errors::IntoPyResult;
use crate::backend::BackendOptions;
use crate::report::{export_table, render};
use crate::runner::{self, Event, Progress, SweepOptions};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

/// How often `PassFinished` reaches Python, and how often Python signals are checked.
const PASSES_EVERY: Duration = Duration::from_millis(100);
const SIGNALS_EVERY: Duration = Duration::from_millis(100);

/// Forwards events to `callback(dict)`; remembers the first Python error to re-raise it.
pub(super) struct PyProgress {
    callback: Option<Py<PyAny>>,
    stop: AtomicBool,
    error: Mutex<Option<PyErr>>,
    last_passes: Mutex<Option<Instant>>,
    /// Points measured and written by this call, and points found already stored: what an
    /// interruption's message reports.
    stored: AtomicUsize,
    skipped: AtomicUsize,
}

impl PyProgress {
    pub(super) fn new(callback: Option<Py<PyAny>>) -> Self {
        PyProgress {
            callback,
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            last_passes: Mutex::new(None),
            stored: AtomicUsize::new(0),
            skipped: AtomicUsize::new(0),
        }
    }

    fn fail(&self, err: PyErr) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(err);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    /// True at most once per `every` (the first call is always due).
    fn due(slot: &Mutex<Option<Instant>>, every: Duration) -> bool {
        let Ok(mut last) = slot.lock() else {
            return true;
        };
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < every) {
            return false;
        }
        *last = Some(now);
        true
    }

    fn take_error(&self) -> Option<PyErr> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }

    /// The KeyboardInterrupt to raise when Ctrl-C stopped the sweep: Python's own carries no
    /// message, and the user wants to know what was kept.
    fn interrupted(&self, results: &std::path::Path) -> PyErr {
        let stored = self.stored.load(Ordering::SeqCst);
        let before = self.skipped.load(Ordering::SeqCst);
        PyKeyboardInterrupt::new_err(format!(
            "interrupted: {stored} point(s) measured by this call are stored in {} ({before} \
             were stored before); the point in progress was dropped; run the same call again \
             to measure only what is missing",
            results.display()
        ))
    }
}

impl Progress for PyProgress {
    fn on_event(&self, event: &Event<'_>) {
        match event {
            Event::PointFinished { .. } => drop(self.stored.fetch_add(1, Ordering::SeqCst)),
            Event::PointSkipped { .. } => drop(self.skipped.fetch_add(1, Ordering::SeqCst)),
            _ => {}
        }
        let Some(callback) = &self.callback else {
            return;
        };
        // Short passes (a small --min-time) would flood a notebook: a few per second at most.
        if let Event::PassFinished { .. } = event {
            if !Self::due(&self.last_passes, PASSES_EVERY) {
                return;
            }
        }
        Python::attach(|py| {
            let sent = super::events::to_dict(py, event)
                .and_then(|dict| callback.call1(py, (dict,)).map(drop));
            if let Err(err) = sent {
                self.fail(err);
            }
        });
    }

    fn cancelled(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// Every registered algorithm with its parameters, ranges, rules and server, as JSON (what
/// `annbench algorithms --format json` prints).
#[pyfunction]
pub fn algorithms_json() -> PyResult<String> {
    serde_json::to_string(&crate::backend::describe::algorithms())
        .map_err(|e| super::errors::to_py(crate::Error::Results(format!("cannot write JSON: {e}"))))
}

/// Runs a sweep (the options of `annbench run`) and returns the JSON export rows of every
/// point of the grid, measured now or already stored.
#[pyfunction]
#[pyo3(signature = (dataset, algorithms, config_files, build_overrides, query_overrides, count, runs, clients, results, data_dir, force, label, servers, timeout, callback, min_time=1.0, target_ci=None, max_time=None, rebuilds=1, order="rounds".to_string(), keep_going=false, expect=None))]
#[allow(clippy::too_many_arguments)]
pub fn run_sweep(
    py: Python<'_>,
    dataset: String,
    algorithms: Vec<String>,
    config_files: Vec<PathBuf>,
    build_overrides: Vec<String>,
    query_overrides: Vec<String>,
    count: usize,
    runs: usize,
    clients: Vec<usize>,
    results: PathBuf,
    data_dir: Option<PathBuf>,
    force: bool,
    label: Option<String>,
    servers: BTreeMap<String, String>,
    timeout: Option<f64>,
    callback: Option<Py<PyAny>>,
    min_time: f64,
    target_ci: Option<f64>,
    max_time: Option<f64>,
    rebuilds: usize,
    order: String,
    keep_going: bool,
    expect: Option<String>,
) -> PyResult<String> {
    let seconds = |v: Option<f64>, what: &str| {
        v.map(Duration::try_from_secs_f64).transpose().map_err(|_| {
            super::errors::to_py(crate::Error::Config(format!(
                "{what} must be a number of seconds (zero or more)"
            )))
        })
    };
    if timeout.is_some_and(|t| t.is_nan() || t <= 0.0) {
        return Err(super::errors::to_py(crate::Error::Config(
            "timeout must be a positive number of seconds".into(),
        )));
    }
    let timeout = seconds(timeout, "timeout")?;
    let min_time = seconds(Some(min_time), "min_time")?.unwrap_or_default();
    let max_time = seconds(max_time, "max_time")?;
    let order = order.parse().map_err(super::errors::to_py)?;
    let expect: Option<crate::results::Storage> = expect
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(super::errors::to_py)?;
    let opts = SweepOptions {
        dataset,
        data_dir: data_dir.unwrap_or_else(crate::dataset::default_data_dir),
        algorithms,
        config_files,
        build_overrides,
        query_overrides,
        count,
        runs,
        min_time,
        target_ci,
        max_time,
        rebuilds,
        // Restarts are a CLI feature: a notebook's kernel does not own the servers.
        restart: false,
        memory: Vec::new(),
        order,
        watch_interference: true,
        clients,
        results_dir: results,
        force,
        label,
        timeout,
        shard: None,
        keep_going,
        backend: server_urls(servers)?,
    };
    let progress = PyProgress::new(callback);
    let sweep = || {
        let summary = runner::run_sweep(&opts, &progress)?;
        if !summary.failures.is_empty() {
            let list: Vec<String> = summary
                .failures
                .iter()
                .map(|f| format!("{}: {}", f.what(), f.error))
                .collect();
            return Err(crate::Error::Backend(format!(
                "{} part(s) of the sweep failed; every other point is stored (a rerun measures \
                 only what is missing): {}",
                list.len(),
                list.join("; ")
            )));
        }
        let points: Vec<_> = summary.points.into_iter().map(|p| p.result).collect();
        let warnings = expect.map_or_else(Vec::new, |e| runner::expect::warnings(&points, e));
        Ok((render::to_json(&export_table(&points))?, warnings))
    };
    let (rows, warnings) = detached(py, &progress, &opts.results_dir, sweep)?;
    // `expect=`: one UserWarning for each point that says the other (docs/server-cost.md).
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    for w in warnings {
        PyErr::warn(py, &category, &std::ffi::CString::new(w)?, 1)?;
    }
    Ok(rows)
}

/// Run `job` on a thread of its own with the GIL released, checking Python's signals every
/// 100 ms (Ctrl-C stops the job at its next poll); a Python error raised by the callback or a
/// KeyboardInterrupt is what the call raises. `results` is named in the interruption's message.
pub(super) fn detached<T: Send>(
    py: Python<'_>,
    progress: &PyProgress,
    results: &std::path::Path,
    job: impl FnOnce() -> crate::Result<T> + Send,
) -> PyResult<T> {
    crate::backend::clear_stop();
    let (tx, rx) = mpsc::channel();
    // A Mutex only to make the receiver shareable with the GIL-free closure.
    let rx = Mutex::new(rx);
    let outcome = std::thread::scope(|s| {
        let worker = s.spawn(move || {
            let _ = tx.send(job());
        });
        let outcome = loop {
            let got = py.detach(|| match rx.lock() {
                Ok(rx) => rx.recv_timeout(SIGNALS_EVERY),
                Err(_) => Err(mpsc::RecvTimeoutError::Disconnected),
            });
            match got {
                Ok(outcome) => break outcome,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    break Err(crate::Error::Backend(
                        "the run stopped without a result (an internal error)".into(),
                    ));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(err) = py.check_signals() {
                        progress.fail(err);
                        crate::backend::request_stop();
                    }
                }
            }
        };
        let _ = py.detach(|| worker.join());
        outcome
    });
    crate::backend::clear_stop();
    // A Python error (KeyboardInterrupt, a failing callback) is what stopped the run.
    if let Some(err) = progress.take_error() {
        if err.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Err(progress.interrupted(results));
        }
        return Err(err);
    }
    match outcome {
        Err(crate::Error::Interrupted) => Err(progress.interrupted(results)),
        other => other.py_err(),
    }
}

/// Backend options with the URLs given as keywords (`mariadb="mysql://..."`), one keyword per
/// registered database: an unknown keyword is an error that lists them.
pub(super) fn server_urls(servers: BTreeMap<String, String>) -> PyResult<BackendOptions> {
    let mut opts = BackendOptions::default();
    for (key, url) in servers {
        let Some(db) = crate::backend::database(&key) else {
            let known: Vec<&str> = crate::backend::databases()
                .iter()
                .map(|d| d.kind.key())
                .collect();
            return Err(super::errors::to_py(crate::Error::Config(format!(
                "unknown keyword argument {key}=: server URLs are given as {}",
                known
                    .iter()
                    .map(|k| format!("{k}=URL"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))));
        };
        opts = opts.with_url(db.kind, url);
    }
    Ok(opts)
}

//! The sweep: load once per (dataset, backend), build once per build point, run every query
//! point (and client count) against it; write each point as soon as it is measured, so a
//! killed sweep resumes where it stopped and loses nothing.

mod build;
mod data;
pub mod measure;
pub mod point;
mod preflight;
pub mod progress;
mod stored;
mod sweep;

pub use progress::{Event, NoProgress, Progress};

use crate::backend::{Backend, BackendOptions};
use crate::config::{self, Grid, Overrides};
use crate::dataset::Dataset;
use crate::params::Params;
use crate::results::PointResult;
use crate::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Everything `annbench run` accepts, as a plain struct (the CLI and Python fill it).
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Dataset name (resolved in `data_dir`) or path to an HDF5 file.
    pub dataset: String,
    pub data_dir: PathBuf,
    /// Algorithms to sweep, in order. Empty: the algorithms named by `config_files`.
    pub algorithms: Vec<String>,
    /// `--config FILE` (repeatable): replaces the built-in grid of the algorithm it names.
    pub config_files: Vec<PathBuf>,
    /// `--build KEY=V1,V2`: replace that key's values in every group.
    pub build_overrides: Vec<String>,
    /// `--query KEY=V1,V2`.
    pub query_overrides: Vec<String>,
    /// k, neighbours per query (default 10).
    pub count: usize,
    /// Timed passes per point after one warm-up pass (default 3).
    pub runs: usize,
    /// Client counts to measure every point with (default `[1]`).
    pub clients: Vec<usize>,
    pub results_dir: PathBuf,
    /// Measure and overwrite points that are already stored.
    pub force: bool,
    pub label: Option<String>,
    /// Longest one index build may take (`--timeout`).
    pub timeout: Option<Duration>,
    /// Go on after a failing point, build or algorithm, and list the failures in the summary
    /// (`--keep-going`); else the first failure stops the sweep.
    pub keep_going: bool,
    /// Server URLs.
    pub backend: BackendOptions,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            dataset: String::new(),
            data_dir: crate::dataset::default_data_dir(),
            algorithms: Vec::new(),
            config_files: Vec::new(),
            build_overrides: Vec::new(),
            query_overrides: Vec::new(),
            count: 10,
            runs: 3,
            clients: vec![1],
            results_dir: PathBuf::from("results"),
            force: false,
            label: None,
            timeout: None,
            keep_going: false,
            backend: BackendOptions::default(),
        }
    }
}

/// One point of a finished sweep.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    pub path: PathBuf,
    /// True when it was already stored and not measured again.
    pub skipped: bool,
    pub result: PointResult,
}

/// A part of the sweep that failed and was skipped (`keep_going`).
#[derive(Debug, Clone)]
pub struct Failure {
    pub algorithm: String,
    /// The build point; `None` when the algorithm failed as a whole (connect, load).
    pub build_args: Option<Params>,
    /// The query point; `None` when the whole build failed.
    pub query_args: Option<Params>,
    pub clients: Option<usize>,
    /// The error message.
    pub error: String,
}

impl Failure {
    /// `mariadb(m=16, ef_search=40) x2 clients`, `mariadb(m=16) build`, or `mariadb`.
    pub fn what(&self) -> String {
        let args: Vec<String> = [&self.build_args, &self.query_args]
            .into_iter()
            .flatten()
            .filter(|a| !a.is_empty())
            .map(crate::params::describe)
            .collect();
        match (&self.build_args, &self.query_args, self.clients) {
            (None, _, _) => self.algorithm.clone(),
            (Some(_), Some(_), Some(c)) => {
                format!("{}({}) x{c} clients", self.algorithm, args.join(", "))
            }
            _ => format!("{}({}) build", self.algorithm, args.join(", ")),
        }
    }
}

/// What a sweep did.
#[derive(Debug, Clone, Default)]
pub struct SweepSummary {
    /// Every point of the grid, in run order, measured or skipped.
    pub points: Vec<SweepPoint>,
    /// Warnings raised during the sweep (also sent to the progress).
    pub warnings: Vec<String>,
    /// What failed and was skipped (only with `keep_going`; else the sweep stops at the first).
    pub failures: Vec<Failure>,
}

impl SweepSummary {
    /// Points measured by this sweep.
    pub fn measured(&self) -> usize {
        self.points.iter().filter(|p| !p.skipped).count()
    }
}

/// Check the options and expand every algorithm's grid: all of it fails before anything runs.
/// `auto` grid values resolve against `rows` train rows when given.
pub fn plan(opts: &SweepOptions, rows: Option<usize>) -> Result<Vec<Grid>> {
    if opts.count == 0 || opts.runs == 0 {
        return Err(Error::Config(
            "--count and --runs must be at least 1".into(),
        ));
    }
    if opts.clients.is_empty() || opts.clients.contains(&0) {
        return Err(Error::Config(
            "--clients must list counts of at least 1, e.g. 1,2,4".into(),
        ));
    }
    let overrides = Overrides {
        build: opts
            .build_overrides
            .iter()
            .map(|s| config::parse_override(s))
            .collect::<Result<_>>()?,
        query: opts
            .query_overrides
            .iter()
            .map(|s| config::parse_override(s))
            .collect::<Result<_>>()?,
    };
    let mut files = Vec::new();
    for path in &opts.config_files {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::io(path, "cannot read config", e))?;
        files.push((
            config::config_algorithm(&text, &path.display().to_string())?,
            path,
        ));
    }
    let mut algorithms = opts.algorithms.clone();
    if algorithms.is_empty() {
        algorithms = files.iter().map(|(a, _)| a.clone()).collect();
    }
    if algorithms.is_empty() {
        return Err(Error::Config(format!(
            "no algorithm: pass --algorithm ({}) or --config FILE",
            crate::backend::algorithm_names()
        )));
    }
    for (algo, path) in &files {
        if !algorithms.contains(algo) {
            return Err(Error::Config(format!(
                "{} is a config for '{algo}', which is not among the algorithms {}; add --algorithm {algo}",
                path.display(),
                algorithms.join(", ")
            )));
        }
    }
    algorithms
        .iter()
        .map(|algo| {
            let file = files
                .iter()
                .find(|(a, _)| a == algo)
                .map(|(_, p)| p.as_path());
            // An override key only some selected algorithms know applies to those only.
            let own = |list: &[(String, Vec<serde_json::Value>)], query: bool| {
                list.iter()
                    .filter(|(k, _)| knows(algo, k, query) || !any_knows(&algorithms, k, query))
                    .cloned()
                    .collect::<Vec<_>>()
            };
            let mine = Overrides {
                build: own(&overrides.build, false),
                query: own(&overrides.query, true),
            };
            config::load_grid(algo, file, &mine, rows)
        })
        .collect()
}

fn knows(algo: &str, key: &str, query: bool) -> bool {
    config::knows_key(algo, key, query)
}

fn any_knows(algorithms: &[String], key: &str, query: bool) -> bool {
    algorithms.iter().any(|a| knows(a, key, query))
}

/// Run a sweep: check every option and where results go, resolve and open the dataset,
/// compute exact ground truth if needed, then sweep every algorithm with its database backend.
/// Everything that can be checked without a server fails before any server work.
pub fn run_sweep(opts: &SweepOptions, progress: &dyn Progress) -> Result<SweepSummary> {
    let opts = &without_repeats(opts);
    // Every option, grid and server URL error before the dataset is read; then `auto` values
    // resolve against its rows.
    let grids = plan(opts, None)?;
    preflight::check_servers(opts, &grids)?;
    let path = crate::dataset::resolve(&opts.dataset, &opts.data_dir)?;
    let info = crate::dataset::info(&path)?;
    let grids = plan(opts, Some(info.train))?;
    preflight::check(opts, &grids, &info.name, info.test)?;
    preflight::check_dimensions(&grids, info.dimension)?;
    preflight::check_privileges(opts, &grids)?;
    let dataset = crate::dataset::open(&path)?;
    let backend_opts = BackendOptions {
        build_timeout: opts.timeout,
        ..opts.backend.clone()
    };
    sweep::run(dataset, &grids, opts, progress, &|name| {
        crate::backend::create(name, &backend_opts)
    })
}

/// Run a sweep over an in-memory dataset with backends from `factory` (tests, Python arrays).
pub fn run_sweep_with(
    dataset: Dataset,
    opts: &SweepOptions,
    progress: &dyn Progress,
    factory: &dyn Fn(&str) -> Result<Box<dyn Backend>>,
) -> Result<SweepSummary> {
    let opts = &without_repeats(opts);
    let grids = plan(opts, Some(dataset.train.nrows()))?;
    preflight::check(opts, &grids, &dataset.name, dataset.test.nrows())?;
    preflight::check_dimensions(&grids, dataset.dimension())?;
    sweep::run(dataset, &grids, opts, progress, factory)
}

/// `opts` with repeated client counts and algorithms listed once (`--clients 1,1` is one
/// measurement per point, not two of the same point).
fn without_repeats(opts: &SweepOptions) -> SweepOptions {
    fn dedup<T: PartialEq + Clone>(v: &[T]) -> Vec<T> {
        let mut out: Vec<T> = Vec::with_capacity(v.len());
        for x in v {
            if !out.contains(x) {
                out.push(x.clone());
            }
        }
        out
    }
    SweepOptions {
        clients: dedup(&opts.clients),
        algorithms: dedup(&opts.algorithms),
        ..opts.clone()
    }
}

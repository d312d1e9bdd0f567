//! The sweep: load once per (dataset, backend), build once per build point, run every query
//! point (and client count) against it; write each point as soon as it is measured, so a
//! killed sweep resumes where it stopped and loses nothing.

pub mod assess;
mod build;
mod ctx;
mod data;
pub mod dryrun;
pub mod estimate;
pub mod expect;
pub mod interference;
mod interleave;
pub mod measure;
pub mod noise;
mod notices;
pub mod point;
mod preflight;
pub mod progress;
pub mod recall;
mod schedule;
pub mod server_cost;
pub mod speed;
mod stored;
pub mod stream;
mod sweep;

pub use sweep::Factory;

pub use notices::CLIENT_CPU_WARN_SHARE;
pub use progress::{Event, NoProgress, PassKind, Progress};
pub use schedule::PassOrder;

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
    /// Timed passes per point (per build) at least, after its recall pass (default 6: the
    /// fewest whose median interval reaches 95%).
    pub runs: usize,
    /// Shortest timed pass: clients cycle through the queries until it has passed (default
    /// 1 s; zero: one pass over the queries).
    pub min_time: Duration,
    /// Add passes until the QPS interval lies within +-this share of the median (e.g. 0.02).
    pub target_ci: Option<f64>,
    /// Time of a point's timed passes (per build) after which no extra pass starts (extra
    /// passes: `target_ci`, or re-measuring a flagged point). `None`: twice `runs x min_time`.
    pub max_time: Option<Duration>,
    /// Build each index this many times and fold the build-to-build spread into the
    /// interval (default 1).
    pub rebuilds: usize,
    /// After each build point's warm passes, restart its server (one `scripts/databases.sh`
    /// manages), and measure each point once more as the `cold` series (`--restart`).
    pub restart: bool,
    /// `--memory 100%,50%`: after each build, restart its server (an instance
    /// `scripts/databases.sh` manages) with its caches at each share of the index size and
    /// measure each point cold, then warm, as the series `mem<P>-cold` and `mem<P>`.
    pub memory: Vec<f64>,
    /// Rounds (default) or point after point.
    pub order: PassOrder,
    /// Sample what else used the machine around every pass (default true). Off: nothing is
    /// recorded and no pass counts as disturbed by interference (tests that must not depend
    /// on the machine's load, systems without `/proc`).
    pub watch_interference: bool,
    /// Client counts to measure every point with (default `[1]`).
    pub clients: Vec<usize>,
    pub results_dir: PathBuf,
    /// Measure and overwrite points that are already stored.
    pub force: bool,
    pub label: Option<String>,
    /// Longest one index build may take (`--timeout`).
    pub timeout: Option<Duration>,
    /// Run only this shard's share of the plan (`--shard I/N`, Slurm and Kubernetes
    /// variables: [`crate::shard::detect`]); `None` runs all of it.
    pub shard: Option<crate::shard::Shard>,
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
            runs: DEFAULT_RUNS,
            min_time: DEFAULT_MIN_TIME,
            target_ci: None,
            max_time: None,
            rebuilds: 1,
            restart: false,
            memory: Vec::new(),
            order: PassOrder::Rounds,
            watch_interference: true,
            clients: vec![1],
            results_dir: PathBuf::from("results"),
            force: false,
            label: None,
            timeout: None,
            shard: None,
            keep_going: false,
            backend: BackendOptions::default(),
        }
    }
}

/// Default `--runs`: six passes give a 95% interval of the median ([min, max] covers it with
/// probability 1 - 2/64).
pub const DEFAULT_RUNS: usize = 6;
/// Default `--min-time`.
pub const DEFAULT_MIN_TIME: Duration = Duration::from_secs(1);
/// Largest `--count` (k) accepted; it is also bounded by the train vectors.
pub const MAX_COUNT: usize = 100_000;
/// Most `--clients` of one point (each holds a connection and a thread).
pub const MAX_CLIENTS: usize = 1024;
/// Longest `--min-time` and `--max-time` accepted.
const LONGEST: Duration = Duration::from_secs(24 * 3600);

impl SweepOptions {
    /// The stopping rule of every point.
    pub fn policy(&self) -> assess::Policy {
        assess::Policy {
            runs: self.runs,
            target_ci: self.target_ci,
            max_time: self
                .max_time
                .unwrap_or_else(|| self.min_time.saturating_mul(2 * self.runs as u32)),
        }
    }

    /// Check the measuring options (before any server work).
    fn check_measuring(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        if self.count == 0 || self.count > MAX_COUNT {
            return bad(format!(
                "--count {}: give 1 to {MAX_COUNT} neighbours per query (and at most the \
                 dataset's train vectors)",
                self.count
            ));
        }
        if self.runs == 0 || self.runs > assess::MAX_PASSES {
            return bad(format!(
                "--runs {}: give 1 to {} timed passes per point (6 or more give a 95% interval)",
                self.runs,
                assess::MAX_PASSES
            ));
        }
        if self.rebuilds == 0 || self.rebuilds > 100 {
            return bad(format!(
                "--rebuilds {}: give 1 (one build per build point) to 100",
                self.rebuilds
            ));
        }
        if self.min_time > LONGEST || self.max_time.is_some_and(|t| t > LONGEST) {
            return bad("--min-time and --max-time must be at most 24h".into());
        }
        if let Some(t) = self.target_ci {
            if !(t > 0.0 && t < 1.0) {
                return bad(format!(
                    "--target-ci {t}: give the interval's half-width as a share of the median,                      between 0 and 1, e.g. 2% or 0.02"
                ));
            }
        }
        Ok(())
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
    /// A failure of an algorithm as a whole (connecting, loading, dropping its index).
    pub fn of_algorithm(algorithm: &str) -> Failure {
        Failure {
            algorithm: algorithm.to_string(),
            build_args: None,
            query_args: None,
            clients: None,
            error: String::new(),
        }
    }

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
    opts.check_measuring()?;
    if opts.clients.is_empty() || opts.clients.contains(&0) {
        return Err(Error::Config(
            "--clients must list counts of at least 1, e.g. 1,2,4".into(),
        ));
    }
    if let Some(n) = opts.clients.iter().find(|&&n| n > MAX_CLIENTS) {
        return Err(Error::Config(format!(
            "--clients {n}: give 1 to {MAX_CLIENTS} concurrent clients (each is a connection \
             and a thread of this process)"
        )));
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
        let text = crate::fsutil::read_text(path, "config")?;
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

/// `--memory 100%,50%` -> [1.0, 0.5] (see `run --memory`).
pub fn memory_shares(text: &str) -> std::result::Result<Vec<f64>, String> {
    build::memory::parse_shares(text)
}

/// The series label of a `--memory` share: `mem50`, `mem50-cold`, after `<label>-`.
pub fn memory_series_label(label: Option<&str>, share: f64, cold: bool) -> String {
    build::memory::series_label(label, share, cold)
}

/// Run a sweep: check every option and where results go, resolve and open the dataset,
/// compute exact ground truth if needed, then sweep every algorithm with its database backend.
/// Everything that can be checked without a server fails before any server work.
pub fn run_sweep(opts: &SweepOptions, progress: &dyn Progress) -> Result<SweepSummary> {
    let opts = &without_repeats(opts);
    // Every option, grid and server URL error before the dataset is read; then `auto` values
    // resolve against its rows.
    let grids = plan(opts, None)?;
    if !opts.memory.is_empty() {
        build::memory::check(opts, &grids)?;
    }
    preflight::check_servers(opts, &grids)?;
    if opts.restart {
        build::restart::check(opts, &preflight::kinds(&grids))?;
    }
    let path = crate::dataset::resolve(&opts.dataset, &opts.data_dir)?;
    let grids = check_plan(opts, &path)?;
    // Held until the sweep returns: no other sweep restarts these instances meanwhile.
    let _locks = match opts.memory.is_empty() {
        true => None,
        false => Some(build::memory::lock(opts, &grids)?),
    };
    if !opts.memory.is_empty() {
        // A sweep stopped at a share left its server there: builds run at full memory.
        build::memory::reset(opts, &preflight::kinds(&grids))?;
    }
    let servers = preflight::check_privileges(opts, &grids).and_then(|()| {
        // At least the most clients of a point and the admin connection are open at once.
        let most = opts.clients.iter().copied().max().unwrap_or(1);
        let needed = |_: &crate::backend::Database| preflight::Connections {
            count: most + 1,
            what: format!("--clients {most} and the admin connection"),
        };
        preflight::check_connections(opts, &grids, &needed, "give fewer --clients")
    });
    match servers {
        // --keep-going: that server's algorithms fail one by one below (listed in the
        // summary) and the others run.
        Err(e) if opts.keep_going => progress.on_event(&Event::Warning(&format!(
            "{e} (--keep-going: the sweep goes on without that server)"
        ))),
        r => r?,
    }
    let (dataset, filters) = check_data(&grids, &path)?;
    let backend_opts = BackendOptions {
        build_timeout: opts.timeout,
        ..opts.backend.clone()
    };
    sweep::run(
        dataset,
        filters.as_ref(),
        &grids,
        opts,
        progress,
        &|name, server| match server {
            None => crate::backend::create(name, &backend_opts),
            Some(s) => crate::backend::create(name, &backend_opts.for_server(s)),
        },
    )
}

/// The checks of the plan against the dataset file at `path` (its shape only): the grids with
/// `auto` values resolved, the label, every result path, free space, and every algorithm's
/// dimension limit. `annbench run` and `--dry-run` make them alike.
pub(crate) fn check_plan(opts: &SweepOptions, path: &std::path::Path) -> Result<Vec<Grid>> {
    let info = crate::dataset::info(path)?;
    let grids = plan(opts, Some(info.train))?;
    preflight::check(opts, &grids, &info.name, info.test)?;
    preflight::check_dimensions(&grids, info.dimension)?;
    Ok(grids)
}

/// The checks of the data at `path` that need no server: the file's values and ground truth
/// (read and checked by [`crate::dataset::open`]), the filter sidecar the grids need (each
/// filter's ground truth checked as the main file's), and every selected algorithm's data
/// checks. `annbench run` and `--dry-run` make them alike, before any server work.
pub(crate) fn check_data(
    grids: &[Grid],
    path: &std::path::Path,
) -> Result<(Dataset, Option<crate::dataset::filters::Filters>)> {
    let dataset = crate::dataset::open(path)?;
    let filters = if sweep::selectivities(grids).is_empty() {
        None
    } else {
        crate::dataset::filters::store::load(path)?
    };
    sweep::check_filters(&dataset, grids, filters.as_ref())?;
    preflight::check_data(grids, &dataset)?;
    Ok((dataset, filters))
}

/// Run a sweep over an in-memory dataset with backends from `factory` (tests, Python arrays).
pub fn run_sweep_with(
    dataset: Dataset,
    opts: &SweepOptions,
    progress: &dyn Progress,
    factory: &dyn Fn(&str) -> Result<Box<dyn Backend>>,
) -> Result<SweepSummary> {
    run_sweep_filtered(dataset, None, opts, progress, factory)
}

/// [`run_sweep_with`] with the dataset's filter workload, for sweeps with `selectivity` points.
pub fn run_sweep_filtered(
    dataset: Dataset,
    filters: Option<&crate::dataset::filters::Filters>,
    opts: &SweepOptions,
    progress: &dyn Progress,
    factory: &dyn Fn(&str) -> Result<Box<dyn Backend>>,
) -> Result<SweepSummary> {
    let opts = &without_repeats(opts);
    let grids = plan(opts, Some(dataset.train.nrows()))?;
    preflight::check(opts, &grids, &dataset.name, dataset.test.nrows())?;
    preflight::check_dimensions(&grids, dataset.dimension())?;
    // Arrays from memory get the checks a file gets on load.
    let bad = |e: String| Error::Dataset(format!("dataset '{}': {e}", dataset.name));
    crate::dataset::validate::check(&dataset).map_err(bad)?;
    crate::dataset::gtcheck::verify(&dataset).map_err(bad)?;
    sweep::run(dataset, filters, &grids, opts, progress, &|name, _| {
        factory(name)
    })
}

/// [`run_sweep_with`] whose factory also gets the named server (`None` for a database's one
/// server), so that tests can run several servers interleaved without a database.
pub fn run_sweep_servers_with(
    dataset: Dataset,
    opts: &SweepOptions,
    progress: &dyn Progress,
    factory: &sweep::Factory<'_>,
) -> Result<SweepSummary> {
    let opts = &without_repeats(opts);
    let grids = plan(opts, Some(dataset.train.nrows()))?;
    preflight::check_servers(opts, &grids)?;
    preflight::check(opts, &grids, &dataset.name, dataset.test.nrows())?;
    sweep::run(dataset, None, &grids, opts, progress, factory)
}

/// `opts` with repeated client counts and algorithms listed once (`--clients 1,1` is one
/// measurement per point, not two of the same point).
pub(crate) fn without_repeats(opts: &SweepOptions) -> SweepOptions {
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

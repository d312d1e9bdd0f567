//! `annbench run --dry-run`: the builds and points a sweep would run and which are stored
//! already, the server memory each build needs (when the server answers), and time estimates
//! from earlier results in the store, optionally after a short calibration sweep on a sample
//! of the dataset (first build and query point of each algorithm, one pass).

use super::estimate::{self, Estimate, Sample};
use super::{Progress, SweepOptions, plan, sweep};
use crate::backend::{Backend, MemoryPlan};
use crate::config::Grid;
use crate::dataset::{self, Info, hdf5_io};
use crate::params::Params;
use crate::results::{self, PointKey, PointResult};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What a sweep would do, with estimates.
#[derive(Debug, Clone)]
pub struct DryRun {
    pub dataset: String,
    pub rows: usize,
    pub dimension: usize,
    pub queries: usize,
    pub algorithms: Vec<AlgorithmPlan>,
    /// How the estimates were made (calibration, where earlier results came from).
    pub notes: Vec<String>,
}

/// One algorithm's part.
#[derive(Debug, Clone)]
pub struct AlgorithmPlan {
    pub algorithm: String,
    pub load: Option<Estimate>,
    pub builds: Vec<BuildPlan>,
    /// Why memory plans are missing (server not reachable), if so.
    pub server_note: Option<String>,
}

/// One index build and its points.
#[derive(Debug, Clone)]
pub struct BuildPlan {
    pub build_args: Params,
    /// Every point stored: the build is skipped.
    pub skipped: bool,
    pub build: Option<Estimate>,
    pub memory: Option<MemoryPlan>,
    pub points: Vec<PointPlan>,
}

/// One (query point x clients).
#[derive(Debug, Clone)]
pub struct PointPlan {
    pub query_args: Params,
    pub clients: usize,
    pub stored: bool,
    /// Warm-up plus the timed passes.
    pub seconds: Option<Estimate>,
}

impl DryRun {
    /// Estimated seconds of everything that would run, and how many parts have no estimate.
    pub fn total(&self) -> (f64, usize) {
        let mut sum = 0.0;
        let mut unknown = 0;
        let mut add = |e: &Option<Estimate>| match e {
            Some(e) => sum += e.seconds,
            None => unknown += 1,
        };
        for a in &self.algorithms {
            add(&a.load);
            for b in a.builds.iter().filter(|b| !b.skipped) {
                add(&b.build);
                b.points
                    .iter()
                    .filter(|p| !p.stored)
                    .for_each(|p| add(&p.seconds));
            }
        }
        (sum, unknown)
    }
}

/// The checks `annbench run` makes before any server work, made by `--dry-run` too, so that a
/// plan it shows is one the run will start: options and grids, server URLs, the label, result
/// paths and free space, dimension limits and, for a local dataset file, its values and ground
/// truth, the filter sidecar and every selected algorithm's data checks. A registered dataset
/// that is not local yet is checked by its registry shape (the run gets it first).
pub fn check(opts: &SweepOptions) -> Result<()> {
    let opts = &super::without_repeats(opts);
    let grids = plan(opts, None)?;
    if !opts.memory.is_empty() {
        super::build::memory::check(opts, &grids)?;
    }
    super::preflight::check_servers(opts, &grids)?;
    let mut notes = Vec::new();
    match locate(opts, &mut notes)? {
        (Some(path), _) => {
            let grids = super::check_plan(opts, &path)?;
            super::check_data(&grids, &path).map(|_| ())
        }
        (None, info) => {
            let grids = plan(opts, Some(info.train))?;
            super::preflight::check(opts, &grids, &info.name, info.test)?;
            super::preflight::check_dimensions(&grids, info.dimension)
        }
    }
}

/// The dry run of `opts`; with `calibrate` rows, a calibration sweep runs first on the servers
/// (its tables are dropped afterwards). `factory` connects backends (memory plans, calibration).
pub fn dry_run(
    opts: &SweepOptions,
    calibrate: Option<usize>,
    progress: &dyn Progress,
    factory: &dyn Fn(&str) -> Result<Box<dyn Backend>>,
) -> Result<DryRun> {
    check(opts)?;
    dry_run_after_check(opts, calibrate, progress, factory)
}

/// [`dry_run`] for a caller that made [`check`] already (the CLI, before printing the plan).
pub fn dry_run_after_check(
    opts: &SweepOptions,
    calibrate: Option<usize>,
    progress: &dyn Progress,
    factory: &dyn Fn(&str) -> Result<Box<dyn Backend>>,
) -> Result<DryRun> {
    let mut notes = Vec::new();
    let (path, info) = locate(opts, &mut notes)?;
    let mut grids = plan(opts, Some(info.train))?;
    if let Some(shard) = &opts.shard {
        let label = opts.label.as_deref();
        grids =
            crate::shard::select(&grids, shard, &info.name, opts.count, label, &opts.clients).grids;
        notes.push(format!("shard {shard}: its builds only"));
    }
    let in_store = |d: &Path| shape_of(d, &opts.data_dir);
    let mut priors = read_priors(&opts.results_dir, opts.count, &in_store);
    if let Some(rows) = calibrate {
        let path = path.ok_or_else(|| {
            Error::Config(format!(
                "--calibrate reads the dataset: get it first with `annbench datasets get {}`",
                opts.dataset
            ))
        })?;
        let dir = opts
            .results_dir
            .join(format!(".calibration-{}", std::process::id()));
        let got = calibrate_on(&path, rows, &grids, opts, &dir, progress, factory);
        let sample_shape = |_: &Path| Some((rows.min(info.train), info.dimension));
        let found = read_priors(&dir, opts.count, &sample_shape);
        let _ = std::fs::remove_dir_all(&dir);
        let (name, found) = got.map(|name| (name, found))?;
        notes.push(format!(
            "calibrated on the first {} rows ({name}): {} point(s)",
            rows.min(info.train),
            found.len()
        ));
        priors.extend(found);
    }
    let datasets: std::collections::BTreeSet<&str> =
        priors.iter().map(|p| p.point.dataset.as_str()).collect();
    notes.push(if datasets.is_empty() {
        "no earlier results with this k in the store: no estimates (add --calibrate ROWS)".into()
    } else {
        format!(
            "estimates from earlier results of {}",
            datasets.into_iter().collect::<Vec<_>>().join(", ")
        )
    });
    let queries = info.test;
    let (rows, dim) = (info.train, info.dimension);
    let mut algorithms = Vec::new();
    for grid in &grids {
        let mut server = factory(&grid.algorithm);
        let server_note = server.as_ref().err().map(|e| e.to_string());
        let mine: Vec<&Prior> = priors
            .iter()
            .filter(|p| p.point.algorithm == grid.algorithm)
            .collect();
        let load = estimate::extrapolate(
            &samples(&mine, |_| true, |p| p.point.load_seconds),
            rows,
            dim,
            estimate::LOAD_EXPONENT,
        );
        let mut builds = Vec::new();
        for b in &grid.builds {
            let same = |p: &&Prior| p.point.build_args == b.build_args;
            let build = estimate::extrapolate(
                &samples(&mine, same, |p| Some(p.point.build_seconds)),
                rows,
                dim,
                estimate::BUILD_EXPONENT,
            );
            let memory = match server.as_mut() {
                Ok(s) => s.memory_plan(rows, dim, &b.build_args)?,
                Err(_) => None,
            };
            let mut points = Vec::new();
            for q in &b.query_args {
                for &clients in &opts.clients {
                    let key = PointKey::new(
                        &info.name,
                        opts.count,
                        &grid.algorithm,
                        &b.build_args,
                        q,
                        clients,
                        opts.label.as_deref(),
                    );
                    let stored =
                        !opts.force && results::point_path(&opts.results_dir, &key)?.exists();
                    let like = |p: &&Prior| {
                        p.point.build_args == b.build_args
                            && p.point.query_args == *q
                            && p.point.clients == clients
                    };
                    // Seconds per query, then the warm-up and timed passes over all queries.
                    let per_query = samples(&mine, like, |p| {
                        (p.point.metrics.qps > 0.0).then(|| 1.0 / p.point.metrics.qps)
                    });
                    let seconds =
                        estimate::extrapolate(&per_query, rows, dim, estimate::QUERY_EXPONENT).map(
                            |mut e| {
                                e.seconds *= ((opts.runs + 1) * queries) as f64;
                                e
                            },
                        );
                    points.push(PointPlan {
                        query_args: q.clone(),
                        clients,
                        stored,
                        seconds,
                    });
                }
            }
            builds.push(BuildPlan {
                build_args: b.build_args.clone(),
                skipped: points.iter().all(|p| p.stored),
                build,
                memory,
                points,
            });
        }
        algorithms.push(AlgorithmPlan {
            algorithm: grid.algorithm.clone(),
            load,
            builds,
            server_note,
        });
    }
    Ok(DryRun {
        dataset: info.name,
        rows,
        dimension: dim,
        queries,
        algorithms,
        notes,
    })
}

/// The dataset's file and shape, without generating or downloading it: a registered name
/// that is not local yet is planned from the registry's sizes (with a note).
fn locate(opts: &SweepOptions, notes: &mut Vec<String>) -> Result<(Option<PathBuf>, Info)> {
    let name = &opts.dataset;
    let local = [
        PathBuf::from(name),
        opts.data_dir.join(name),
        opts.data_dir.join(format!("{name}.hdf5")),
    ];
    if let Some(p) = local.into_iter().find(|p| p.is_file()) {
        let info = hdf5_io::info(&p)?;
        return Ok((Some(p), info));
    }
    let e = dataset::registry::lookup(name)?;
    notes.push(format!(
        "{name} is not in {} yet: the run first gets it (`annbench datasets get {name}`), \
         which is not estimated",
        opts.data_dir.display()
    ));
    let info = Info {
        name: e.name.clone(),
        metric: e.metric,
        dimension: e.dimension,
        train: e.train,
        test: e.test,
        ground_truth_k: Some(100),
        file_size: 0,
    };
    Ok((None, info))
}

/// One stored point and the shape of its dataset.
struct Prior {
    rows: usize,
    dim: usize,
    point: PointResult,
}

/// One sample per dataset among `priors` matching `keep`, valued by `value`.
fn samples(
    priors: &[&Prior],
    keep: impl Fn(&&Prior) -> bool,
    value: impl Fn(&Prior) -> Option<f64>,
) -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::new();
    for p in priors.iter().filter(|p| keep(p)) {
        if out.iter().any(|s| s.source == p.point.dataset) {
            continue;
        }
        if let Some(seconds) = value(p) {
            out.push(Sample {
                rows: p.rows,
                dim: p.dim,
                seconds,
                source: p.point.dataset.clone(),
            });
        }
    }
    out
}

/// annbench points of every dataset in `results_dir` with `count` whose dataset shape `shape`
/// knows. Unreadable files are skipped: they only inform estimates.
fn read_priors(
    results_dir: &Path,
    count: usize,
    shape: &dyn Fn(&Path) -> Option<(usize, usize)>,
) -> Vec<Prior> {
    let mut out = Vec::new();
    for ds_dir in subdirs(results_dir) {
        let Some((rows, dim)) = shape(&ds_dir) else {
            continue;
        };
        for algo_dir in subdirs(&ds_dir.join(count.to_string())) {
            let Ok(files) = std::fs::read_dir(&algo_dir) else {
                continue;
            };
            for f in files.flatten() {
                let path = f.path();
                if path.extension().is_some_and(|e| e == "hdf5") {
                    if let Ok(point) = results::read_point(&path) {
                        out.push(Prior { rows, dim, point });
                    }
                }
            }
        }
    }
    out
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// (train rows, dimension) of the dataset a results directory is named after.
fn shape_of(ds_dir: &Path, data_dir: &Path) -> Option<(usize, usize)> {
    let name = ds_dir.file_name()?.to_str()?;
    if let Ok(i) = hdf5_io::info(&data_dir.join(format!("{name}.hdf5"))) {
        return Some((i.train, i.dimension));
    }
    let e = dataset::registry::lookup(name).ok()?;
    Some((e.train, e.dimension))
}

/// Runs the first build and query point of every grid once on the first `rows` train rows
/// (and up to 1,000 queries) into `dir`, then drops the calibration tables. Returns the
/// sample's dataset name.
fn calibrate_on(
    path: &Path,
    rows: usize,
    grids: &[Grid],
    opts: &SweepOptions,
    dir: &Path,
    progress: &dyn Progress,
    factory: &dyn Fn(&str) -> Result<Box<dyn Backend>>,
) -> Result<String> {
    let info = hdf5_io::info(path)?;
    if rows < 100 {
        return Err(Error::Config(format!(
            "--calibrate {rows}: use at least 100 rows (e.g. 20000)"
        )));
    }
    let mut sample = hdf5_io::open_head(path, rows.min(info.train), info.test.min(1000))?;
    sample.name = format!("{}-calibration-{}", info.name, sample.train.nrows());
    let name = sample.name.clone();
    let small: Vec<Grid> = grids
        .iter()
        .map(|g| Grid {
            builds: g
                .builds
                .iter()
                .take(1)
                .map(|b| {
                    // Calibrated unfiltered: the sample has no filter attributes.
                    let mut build_args = b.build_args.clone();
                    build_args.remove(crate::backend::filter::FILTER_INDEX.name);
                    let mut query: Vec<Params> = b.query_args.iter().take(1).cloned().collect();
                    for q in &mut query {
                        q.remove(crate::backend::filter::SELECTIVITY.name);
                        q.remove(crate::backend::filter::FILTER.name);
                    }
                    crate::config::BuildPoint {
                        build_args,
                        query_args: query,
                    }
                })
                .collect(),
            ..g.clone()
        })
        .collect();
    let cal_opts = SweepOptions {
        results_dir: dir.to_path_buf(),
        runs: 1,
        clients: vec![1],
        force: true,
        label: None,
        ..opts.clone()
    };
    let ran = sweep::run(sample, None, &small, &cal_opts, progress, &|name, _| {
        factory(name)
    });
    for g in grids {
        drop_calibration_table(&g.algorithm, &name, opts);
    }
    ran.map(|_| name)
}

/// Best effort: the calibration tables are small, and a failure here must not hide the result.
fn drop_calibration_table(algorithm: &str, dataset: &str, opts: &SweepOptions) {
    if let Some(mut backend) = crate::backend::algorithm(algorithm)
        .filter(|a| a.database.is_some())
        .and_then(|a| (a.create)(&opts.backend).ok())
    {
        let _ = backend.drop_tables(dataset);
    }
}

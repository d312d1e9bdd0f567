//! Writing and reading annbench point files: ann-benchmarks' result layout (attrs `build_time`,
//! `index_size` kB, `algo`, `dataset`, `name`, `run_count`, `distance`, `count`,
//! `best_search_time`, `candidates`, `expect_extra`, `batch_mode`; datasets `times`,
//! `neighbors`, `distances`) plus annbench's figure as plain attributes (`qps`, the median;
//! `qps_ci_low`, `qps_ci_high`, `qps_cv`, `passes`) and one JSON attr `annbench` with
//! everything (those included).
//!
//! `best_search_time` is the best pass's wall seconds / queries, so ann-benchmarks' tools
//! (QPS = 1 / best_search_time) show the best pass's measured throughput, as theirs do.
//!
//! Format versions: 1 stored the best pass as `qps`; 2 added `dataset_fingerprint`; 3 stores
//! the median with its interval, the best pass as `qps_best`, and per-pass latency and
//! interference. Format 1 and 2 files are read by recomputing the median and its interval
//! from their passes (format 1 with no fingerprint). A file is built in memory and then
//! written atomically, so a full disk is a clear error, never a crash.

use super::BuildPhase;
use super::h5util::{read_attr_str, write_attr, write_image};
use super::path::point_path;
use super::{Environment, Flag, Pass, PointMetrics, PointResult};
use crate::params::Params;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Name of the JSON attribute that marks an annbench file.
pub const EXTRAS_ATTR: &str = "annbench";
const FORMAT: u32 = 3;

/// Point files: formats 1 and 2 are read and upgraded in memory; a newer one is refused.
pub(crate) const VERSIONED: crate::fsutil::Versioned = crate::fsutil::Versioned {
    kind: "a result file",
    current: FORMAT as u64,
    oldest: 1,
    aside: "(out of the result store) to measure the point again with this annbench",
};

/// annbench's fields that ann-benchmarks' layout has no place for.
#[derive(Debug, Serialize, Deserialize)]
struct Extras {
    format: u32,
    build_args: Params,
    query_args: Params,
    clients: usize,
    label: Option<String>,
    /// Fingerprint of the data measured on (format 2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataset_fingerprint: Option<String>,
    load_seconds: Option<f64>,
    index_size_bytes: Option<u64>,
    table_size_bytes: Option<u64>,
    build_phases: Vec<BuildPhase>,
    passes: Vec<Pass>,
    metrics: PointMetrics,
    environment: Environment,
}

fn h5err(path: &Path, what: &str) -> impl Fn(hdf5::Error) -> Error {
    let path = path.display().to_string();
    let what = what.to_string();
    move |e| Error::Results(format!("{what} {path}: {e}"))
}

/// Write `point` to its file under `results_dir`, atomically (temp file, fsync, rename): a
/// reader or a resumed sweep sees the whole point or nothing. A file there that holds another
/// point (which injective names rule out, short of a case-insensitive file system or a
/// renamed file) is never overwritten. Returns the final path.
pub fn write_point(results_dir: &Path, point: &PointResult) -> Result<PathBuf> {
    let path = point_path(results_dir, &point.key())?;
    if path.exists() {
        refuse_newer(&path)?;
        if let Ok(other) = read_point(&path) {
            if !other.key().same_point(&point.key()) {
                return Err(Error::Results(format!(
                    "{} holds another point ({}), not this one ({}); refusing to overwrite it: \
                     move it away, or use another --results directory",
                    path.display(),
                    describe_key(&other),
                    describe_key(point)
                )));
            }
        }
    }
    let dir = path.parent().unwrap_or(results_dir);
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(dir, "cannot create results directory", e))?;
    write_image(&path, "a result file", |file| fill(file, point))?;
    Ok(path)
}

/// `label 'x', clients 2, M=16, ef_search=40`, for the overwrite refusal.
fn describe_key(p: &PointResult) -> String {
    let label = p
        .label
        .as_deref()
        .map_or("no label".to_string(), |l| format!("label '{l}'"));
    format!(
        "{} {}, {label}, {} client(s), {} {}",
        p.dataset,
        p.algorithm,
        p.clients,
        crate::params::describe(&p.build_args),
        crate::params::describe(&p.query_args)
    )
}

fn fill(file: &hdf5::File, p: &PointResult) -> hdf5::Result<()> {
    let best_search_time = p
        .passes
        .iter()
        .filter(|x| x.queries > 0)
        .map(|x| x.wall_seconds / x.queries as f64)
        .fold(f64::INFINITY, f64::min);
    let best_search_time = if best_search_time.is_finite() {
        best_search_time
    } else {
        0.0
    };
    let args: Vec<String> = [&p.build_args, &p.query_args]
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| crate::params::describe(a))
        .collect();
    let name = format!("{}({})", p.algorithm, args.join(", "));
    let extras = Extras {
        format: FORMAT,
        build_args: p.build_args.clone(),
        query_args: p.query_args.clone(),
        clients: p.clients,
        label: p.label.clone(),
        dataset_fingerprint: p.dataset_fingerprint.clone(),
        load_seconds: p.load_seconds,
        index_size_bytes: p.index_size_bytes,
        table_size_bytes: p.table_size_bytes,
        build_phases: p.build_phases.clone(),
        passes: p.passes.clone(),
        metrics: p.metrics.clone(),
        environment: p.environment.clone(),
    };
    let json = serde_json::to_string(&extras).map_err(|e| hdf5::Error::from(e.to_string()))?;
    write_attr(file, "build_time", p.build_seconds)?;
    let kb = p.index_size_bytes.map_or(0.0, |b| b as f64 / 1024.0);
    write_attr(file, "index_size", kb)?;
    write_attr(file, "algo", p.algorithm.as_str())?;
    write_attr(file, "dataset", p.dataset.as_str())?;
    write_attr(file, "name", name.as_str())?;
    write_attr(file, "run_count", p.passes.len() as i64)?;
    write_attr(file, "distance", p.distance.as_str())?;
    write_attr(file, "count", p.count as i64)?;
    write_attr(file, "best_search_time", best_search_time)?;
    write_attr(file, "candidates", p.count as f64)?;
    write_attr(file, "expect_extra", false)?;
    write_attr(file, "batch_mode", false)?;
    // annbench's figure and its spread as plain attributes too, for h5py readers (the same
    // values as in the JSON; NaN where there is no interval).
    let m = &p.metrics;
    write_attr(file, "qps", m.qps)?;
    write_attr(file, "qps_ci_low", m.qps_ci_low.unwrap_or(f64::NAN))?;
    write_attr(file, "qps_ci_high", m.qps_ci_high.unwrap_or(f64::NAN))?;
    write_attr(file, "qps_cv", m.qps_cv.unwrap_or(f64::NAN))?;
    write_attr(file, "passes", m.passes as i64)?;
    write_attr(file, EXTRAS_ATTR, json.as_str())?;
    file.new_dataset_builder()
        .with_data(&p.latencies[..])
        .create("times")?;
    file.new_dataset_builder()
        .with_data(&p.neighbors)
        .create("neighbors")?;
    file.new_dataset_builder()
        .with_data(&p.distances)
        .create("distances")?;
    Ok(())
}

/// Read an annbench point file. ann-benchmarks' own files need ground truth: read those with
/// [`super::load_points`].
pub fn read_point(path: &Path) -> Result<PointResult> {
    let err = h5err(path, "cannot read result file");
    // A FIFO at the path would block the open until a writer comes (a sweep hung on it).
    crate::fsutil::refuse_special(path, "a result file")?;
    let file = hdf5::File::open(path).map_err(&err)?;
    let json = read_attr_str(&file, EXTRAS_ATTR).map_err(|_| {
        Error::Results(format!(
            "{} is not an annbench result (no '{EXTRAS_ATTR}' attribute); ann-benchmarks \
             results are read by load_points with the dataset's ground truth",
            path.display()
        ))
    })?;
    let mut x: Extras = serde_json::from_str(&json).map_err(|e| {
        Error::Results(format!(
            "corrupt '{EXTRAS_ATTR}' attribute in {}: {e}",
            path.display()
        ))
    })?;
    VERSIONED.check(path, u64::from(x.format))?;
    if x.format < 3 {
        upgrade_best_to_median(&mut x.metrics);
    }
    let distance = read_attr_str(&file, "distance").map_err(&err)?.parse()?;
    let algorithm = read_attr_str(&file, "algo").map_err(&err)?;
    let dataset = read_attr_str(&file, "dataset").map_err(&err)?;
    let count = file
        .attr("count")
        .and_then(|a| a.read_scalar::<i64>())
        .map_err(&err)?;
    let build_seconds = file
        .attr("build_time")
        .and_then(|a| a.read_scalar::<f64>())
        .map_err(&err)?;
    let latencies = file
        .dataset("times")
        .and_then(|d| d.read_raw::<f64>())
        .map_err(&err)?;
    let neighbors = file
        .dataset("neighbors")
        .and_then(|d| d.read_2d::<i64>())
        .map_err(&err)?;
    let distances = file
        .dataset("distances")
        .and_then(|d| d.read_2d::<f32>())
        .map_err(&err)?;
    let mut point = PointResult {
        dataset,
        distance,
        count: usize::try_from(count).unwrap_or(0),
        algorithm,
        build_args: x.build_args,
        query_args: x.query_args,
        clients: x.clients,
        label: x.label,
        dataset_fingerprint: x.dataset_fingerprint,
        load_seconds: x.load_seconds,
        build_seconds,
        index_size_bytes: x.index_size_bytes,
        table_size_bytes: x.table_size_bytes,
        build_phases: x.build_phases,
        neighbors,
        distances,
        latencies,
        passes: x.passes,
        metrics: x.metrics,
        environment: x.environment,
    };
    if point.old_recall_rule() && !point.metrics.flags.contains(&Flag::Tolerance) {
        point.metrics.flags.push(Flag::Tolerance);
    }
    Ok(point)
}

/// Formats 1 and 2 kept the best pass as `qps`: it becomes `qps_best`, and `qps` the median of the
/// stored passes with its interval (latency figures stay those of the best pass).
fn upgrade_best_to_median(m: &mut PointMetrics) {
    use crate::metrics::interval::{LEVEL, cv, median, median_interval};
    m.qps_best = m.qps;
    m.qps = median(&m.qps_passes).unwrap_or(m.qps);
    let ci = median_interval(&m.qps_passes, LEVEL);
    m.qps_ci_low = ci.map(|i| i.low);
    m.qps_ci_high = ci.map(|i| i.high);
    m.qps_ci_level = ci.map(|i| i.level);
    m.qps_cv = cv(&m.qps_passes);
    m.passes = m.qps_passes.len();
}

/// An error when the file at `path` is a point of a newer format than this annbench's: it is
/// neither measured again nor written over. Anything else (no file, another tool's file, a
/// damaged one) is left to [`read_point`].
pub fn refuse_newer(path: &Path) -> Result<()> {
    #[derive(Deserialize)]
    struct Head {
        format: u64,
    }
    if crate::fsutil::refuse_special(path, "a result file").is_err() {
        return Ok(());
    }
    let format = hdf5::File::open(path)
        .ok()
        .and_then(|f| read_attr_str(&f, EXTRAS_ATTR).ok())
        .and_then(|json| serde_json::from_str::<Head>(&json).ok())
        .map(|h| h.format);
    match format {
        Some(f) if VERSIONED.is_newer(f) => VERSIONED.check(path, f),
        _ => Ok(()),
    }
}

/// Whether `path` is an annbench point file (has the `annbench` attribute).
pub fn is_annbench_file(file: &hdf5::File) -> bool {
    file.attr(EXTRAS_ATTR).is_ok()
}

//! The result store: one HDF5 file per measured point, in ann-benchmarks' result layout plus
//! annbench's extra fields, written atomically after each point.
//!
//! Layout: `<results>/<dataset>/<count>/<algorithm>/<name>.hdf5` (see [`point_path`]).
//! [`load_points`] reads annbench files and ann-benchmarks' own files alike.

mod annb;
pub mod env;
pub(crate) mod h5util;
pub mod merge;
pub mod mixed;
mod path;
pub mod record;
mod reported;
pub mod server_cost;
mod store;
pub mod stream;

pub use path::{
    MAX_FILE_NAME, PointKey, dataset_dir, legacy_dataset_dir, legacy_point_path, point_name,
    point_path,
};
pub use record::{
    BuildRun, Environment, Flag, Interference, Interleave, Pass, PointMetrics, PointResult,
};
pub use reported::{BuildPhase, ServerInfo};
pub use server_cost::{IO_BOUND_KIB_PER_QUERY, PassServerCost, ServerCost, Storage};
pub use store::{read_point, refuse_newer, write_point};

use crate::dataset::GroundTruth;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The store key of a `--dataset` argument: a name as given, or a file's stem for a path
/// (`run --dataset ./custom.hdf5` stores under `custom`, so `table --dataset ./custom.hdf5`
/// finds it).
pub fn dataset_key(dataset: &str) -> String {
    let path = std::path::Path::new(dataset);
    if crate::dataset::datadir::looks_like_path(dataset) {
        path.file_stem()
            .map_or_else(|| dataset.to_owned(), |s| s.to_string_lossy().into_owned())
    } else {
        dataset.to_owned()
    }
}

/// Every point stored for (`dataset`, `count`), annbench's and ann-benchmarks', sorted by
/// algorithm then file name. ann-benchmarks files get their metrics from the dataset's ground
/// truth, found in `data_dir`; their batch-mode files are skipped (not comparable).
///
/// A file that cannot be read is an error naming it: the store is written atomically, so a
/// broken file means something outside annbench changed it, and silently leaving points out
/// of a published table would be worse than stopping. So are points of this dataset name
/// measured on different data (their fingerprints differ, see [`mixed`]).
pub fn load_points(
    results_dir: &Path,
    dataset: &str,
    count: usize,
    data_dir: &Path,
) -> Result<Vec<PointResult>> {
    // Names with `%` or a leading `.` had a directory of their own before names were encoded.
    let roots: Vec<PathBuf> = std::iter::once(dataset_dir(results_dir, dataset)?)
        .chain(legacy_dataset_dir(results_dir, dataset))
        .map(|d| d.join(count.to_string()))
        .filter(|r| r.is_dir())
        .collect();
    let mut files = Vec::new();
    for root in &roots {
        files.extend(point_files(root)?);
    }
    let mut truth: Option<GroundTruth> = None;
    let mut points = Vec::new();
    let mut prints = Vec::new();
    for path in files {
        crate::fsutil::refuse_special(&path, "a result file")?;
        let file = hdf5::File::open(&path).map_err(|e| {
            Error::Results(format!(
                "cannot read result file {}: {e}; move it out of {} to continue",
                path.display(),
                results_dir.display()
            ))
        })?;
        if store::is_annbench_file(&file) {
            drop(file);
            let p = read_point(&path)?;
            if let Some(f) = &p.dataset_fingerprint {
                let source = path.display().to_string();
                prints.push(mixed::Print::of(
                    &p.dataset,
                    p.count,
                    &p.query_args,
                    f,
                    source,
                ));
            }
            points.push(p);
        } else if !annb::is_batch(&file) {
            if truth.is_none() {
                truth = Some(ground_truth(data_dir, dataset, &path)?);
            }
            if let Some(t) = &truth {
                points.push(annb::read_ann_benchmarks(&path, &file, t)?);
            }
        }
    }
    if let Some(what) = mixed::mixed(&prints) {
        return Err(Error::Results(format!(
            "{} in {}: {what}. Tables, comparisons and reports set points side by side as one \
             dataset's, so they are not made of these; keep one data file's points in this \
             store: move the other files out (into a store of their own), or measure them \
             again on the current file with `annbench run --dataset {dataset}` (it measures \
             points of other data again)",
            dataset,
            results_dir.display()
        )));
    }
    Ok(points)
}

/// `*.hdf5` files one level below each algorithm directory of `root`, sorted; hidden files
/// (in-flight temp files) are ignored.
fn point_files(root: &Path) -> Result<Vec<PathBuf>> {
    let list = |dir: &Path| -> Result<Vec<PathBuf>> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, "cannot list results in", e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                !p.file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(".")
                    .starts_with('.')
            })
            .collect();
        out.sort();
        Ok(out)
    };
    let mut files = Vec::new();
    for algo_dir in list(root)?.into_iter().filter(|p| p.is_dir()) {
        files.extend(
            list(&algo_dir)?
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "hdf5") && p.is_file()),
        );
    }
    Ok(files)
}

/// The exact ground truth of `dataset`, resolved in `data_dir` like `annbench run` does.
fn ground_truth(data_dir: &Path, dataset: &str, needed_by: &Path) -> Result<GroundTruth> {
    let why = |e: Error| {
        Error::Dataset(format!(
            "{} is an ann-benchmarks result; its metrics need the ground truth of '{dataset}':              {e} (download the dataset or pass --data-dir)",
            needed_by.display()
        ))
    };
    let data = crate::dataset::resolve(dataset, data_dir)
        .and_then(|path| crate::dataset::open(&path))
        .map_err(why)?;
    data.ground_truth.ok_or_else(|| {
        Error::Dataset(format!(
            "{} is an ann-benchmarks result, but dataset '{dataset}' has no ground truth;              compute it with `annbench datasets groundtruth {dataset}`",
            needed_by.display()
        ))
    })
}

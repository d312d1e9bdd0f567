//! The sweep's dataset: open it and make sure exact ground truth at least k wide exists.
//! (A minimal reader until the dataset module's `open`/`resolve` land on main.)

use super::progress::{Event, Progress};
use crate::dataset::{Dataset, GroundTruth};
use crate::{Error, Result};
use ndarray::Array2;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Resolve `name_or_path`: an existing file, else `<data_dir>/<name>.hdf5`.
pub fn open(name_or_path: &str, data_dir: &Path) -> Result<Dataset> {
    let direct = PathBuf::from(name_or_path);
    let path = if direct.is_file() {
        direct
    } else {
        data_dir.join(format!("{name_or_path}.hdf5"))
    };
    if !path.is_file() {
        return Err(Error::Dataset(format!(
            "dataset '{name_or_path}' not found: no such file, and no {} (download it with \
             `annbench datasets download {name_or_path}` or pass --data-dir)",
            path.display()
        )));
    }
    let err =
        |e: hdf5::Error| Error::Dataset(format!("cannot read dataset {}: {e}", path.display()));
    let file = hdf5::File::open(&path).map_err(err)?;
    let distance: hdf5::types::VarLenUnicode = file
        .attr("distance")
        .and_then(|a| a.read_scalar())
        .map_err(err)?;
    let ground_truth = match (file.dataset("neighbors"), file.dataset("distances")) {
        (Ok(n), Ok(d)) => Some(GroundTruth {
            neighbors: n.read_2d::<i32>().map_err(err)?,
            distances: d.read_2d::<f32>().map_err(err)?,
        }),
        _ => None,
    };
    Ok(Dataset {
        name: path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name_or_path)
            .to_string(),
        metric: distance.as_str().parse()?,
        train: file
            .dataset("train")
            .and_then(|d| d.read_2d::<f32>())
            .map_err(err)?,
        test: file
            .dataset("test")
            .and_then(|d| d.read_2d::<f32>())
            .map_err(err)?,
        ground_truth,
    })
}

/// Compute exact ground truth when it is missing, narrower than `k`, or for other queries.
pub fn ensure_ground_truth(data: &mut Dataset, k: usize, progress: &dyn Progress) -> Result<()> {
    let n = data.train.nrows();
    if k > n {
        return Err(Error::Config(format!(
            "--count {k} is larger than the {n} train vectors of '{}'",
            data.name
        )));
    }
    let fits = data
        .ground_truth
        .as_ref()
        .is_some_and(|g| g.distances.ncols() >= k && g.distances.nrows() == data.test.nrows());
    if fits {
        return Ok(());
    }
    let width = k.max(100).min(n);
    progress.on_event(&Event::GroundTruth {
        queries: data.test.nrows(),
        k: width,
    });
    let (train, metric) = (&data.train, data.metric);
    let rows: Vec<Vec<(f32, i32)>> = data
        .test
        .outer_iter()
        .into_par_iter()
        .map(|q| {
            let q = q.to_vec();
            let mut all: Vec<(f32, i32)> = train
                .outer_iter()
                .enumerate()
                .map(|(i, r)| (metric.distance(&r.to_vec(), &q), i as i32))
                .collect();
            let by = |a: &(f32, i32), b: &(f32, i32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
            all.select_nth_unstable_by(width - 1, by);
            all.truncate(width);
            all.sort_unstable_by(by);
            all
        })
        .collect();
    let q = rows.len();
    let mut neighbors = Array2::zeros((q, width));
    let mut distances = Array2::zeros((q, width));
    for (i, row) in rows.iter().enumerate() {
        for (j, (d, id)) in row.iter().enumerate() {
            neighbors[[i, j]] = *id;
            distances[[i, j]] = *d;
        }
    }
    data.ground_truth = Some(GroundTruth {
        neighbors,
        distances,
    });
    Ok(())
}

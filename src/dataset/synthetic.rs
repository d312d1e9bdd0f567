//! The ann-benchmarks `random-*` sets, generated locally: Gaussian blobs (unit standard
//! deviation around centres drawn uniformly in [-10, 10]^d, as scikit-learn's `make_blobs`),
//! 10% split off as queries, exact ground truth for k = 100. Seeded and reproducible; the
//! values differ from ann-benchmarks' files (a different random generator), the sizes match.

use super::registry::{Entry, Source};
use super::{Dataset, create, datadir, hdf5_io};
use crate::{Error, Result};
use ndarray::Array2;
use std::path::{Path, PathBuf};

use super::rng::Rng;

/// Seed used for the named random sets.
pub const SEED: u64 = 1;

/// Shape of a blob set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blobs {
    /// Total vectors (train + test).
    pub samples: usize,
    /// Dimension.
    pub dims: usize,
    /// Number of clusters.
    pub centers: usize,
}

/// ann-benchmarks' parameters for a `random-*` name.
pub fn blobs_for(entry: &Entry) -> Option<Blobs> {
    match entry.name.as_str() {
        "random-xs-20-euclidean" | "random-xs-20-angular" => Some(Blobs {
            samples: 10_000,
            dims: 20,
            centers: 100,
        }),
        "random-s-100-euclidean" | "random-s-100-angular" => Some(Blobs {
            samples: 100_000,
            dims: 100,
            centers: 1000,
        }),
        _ => None,
    }
}

/// Gaussian blobs: sample i belongs to cluster i % centers; rows are shuffled.
pub fn blobs(b: Blobs, seed: u64) -> Array2<f32> {
    let mut rng = Rng::new(seed);
    let centers = Array2::from_shape_fn((b.centers.max(1), b.dims), |_| {
        (rng.uniform() * 20.0 - 10.0) as f32
    });
    let mut order: Vec<usize> = (0..b.samples).collect();
    rng.shuffle(&mut order);
    let mut out = Array2::<f32>::zeros((b.samples, b.dims));
    for (row, &i) in order.iter().enumerate() {
        let c = centers.row(i % centers.nrows());
        for (o, &m) in out.row_mut(row).iter_mut().zip(c.iter()) {
            *o = (f64::from(m) + rng.normal()) as f32;
        }
    }
    out
}

/// Generates the named synthetic set with ground truth (k = 100).
pub fn generate(entry: &Entry, seed: u64) -> Result<Dataset> {
    let b = blobs_for(entry)
        .filter(|_| entry.source == Source::Synthetic)
        .ok_or_else(|| Error::Dataset(format!("'{}' is not a synthetic dataset", entry.name)))?;
    let data = blobs(b, seed);
    let (train, test) = create::split(&data, b.samples / 10, seed)?;
    drop(data);
    create::from_parts(&entry.name, entry.metric, train, test, 100)
}

/// Generates the named set into `{dir}/{name}.hdf5` (atomically) and returns the path.
pub fn generate_to(entry: &Entry, dir: &Path) -> Result<PathBuf> {
    let ds = generate(entry, SEED)?;
    datadir::ensure_dir(dir)?;
    let path = dir.join(entry.file_name());
    hdf5_io::save(&ds, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_seeded_and_clustered() {
        let b = Blobs {
            samples: 200,
            dims: 3,
            centers: 4,
        };
        let a = blobs(b, 1);
        assert_eq!(a, blobs(b, 1));
        assert_ne!(a, blobs(b, 2));
        assert!(a.iter().all(|v| v.abs() < 16.0));
    }

    #[test]
    fn xs_sizes_match_ann_benchmarks() {
        let e = crate::dataset::registry::lookup("random-xs-20-angular").unwrap();
        let ds = generate(e, SEED).unwrap();
        assert_eq!(
            (ds.train.nrows(), ds.test.nrows(), ds.dimension()),
            (e.train, e.test, e.dimension)
        );
        let gt = ds.ground_truth.unwrap();
        assert_eq!(gt.neighbors.dim(), (1000, 100));
    }
}

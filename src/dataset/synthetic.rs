//! Synthetic sets generated locally, seeded and reproducible, with exact ground truth for
//! k = 100:
//! - ann-benchmarks' `random-*` sets: Gaussian blobs (unit standard deviation around centres
//!   drawn uniformly in [-10, 10]^d, as scikit-learn's `make_blobs`), 10% split off as queries.
//!   The values differ from ann-benchmarks' files (a different random generator), the sizes match.
//! - `clustered-1536-*-angular`: text-embedding-like vectors ([`super::embeddings`]), 10,000
//!   queries from the same distribution; the sizes are nested samples of one distribution.

use super::embeddings::{self, Embeddings};
use super::registry::{Entry, Source};
use super::{Dataset, create, datafile, hdf5_io};
use crate::{Error, Result};
use ndarray::Array2;
use std::path::{Path, PathBuf};
use std::time::Instant;

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

/// The embeddings distribution of a `clustered-1536-*` name, sized as its registry entry.
pub fn embeddings_for(entry: &Entry) -> Option<Embeddings> {
    let is_clustered = entry.name.starts_with("clustered-") && entry.dimension == 1536;
    is_clustered.then(|| Embeddings::openai_like(entry.train, entry.test))
}

/// Seconds spent generating a set: the vectors, their exact ground truth, writing the file.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    pub vectors: f64,
    pub ground_truth: f64,
    pub write: f64,
}

/// Generates the named synthetic set with ground truth (k = 100).
pub fn generate(entry: &Entry, seed: u64) -> Result<Dataset> {
    generate_timed(entry, seed).map(|(ds, _)| ds)
}

fn generate_timed(entry: &Entry, seed: u64) -> Result<(Dataset, Timings)> {
    let not_synthetic = || Error::Dataset(format!("'{}' is not a synthetic dataset", entry.name));
    if entry.source != Source::Synthetic {
        return Err(not_synthetic());
    }
    let t0 = Instant::now();
    let (train, test) = if let Some(b) = blobs_for(entry) {
        create::split(blobs(b, seed), b.samples / 10, seed)?
    } else if let Some(e) = embeddings_for(entry) {
        embeddings::generate(e, seed)?
    } else {
        return Err(not_synthetic());
    };
    let vectors = t0.elapsed().as_secs_f64();
    let ds = create::from_parts(&entry.name, entry.metric, train, test, 100)?;
    let timings = Timings {
        vectors,
        ground_truth: t0.elapsed().as_secs_f64() - vectors,
        write: 0.0,
    };
    Ok((ds, timings))
}

/// Generates the named set into `{dir}/{name}.hdf5` (atomically) and returns the path.
pub fn generate_to(entry: &Entry, dir: &Path) -> Result<PathBuf> {
    generate_to_timed(entry, dir).map(|(path, _)| path)
}

/// [`generate_to`], also returning where the time went.
pub fn generate_to_timed(entry: &Entry, dir: &Path) -> Result<(PathBuf, Timings)> {
    let (ds, mut timings) = generate_timed(entry, SEED)?;
    datafile::ensure_dir(dir)?;
    let path = dir.join(entry.file_name());
    let t0 = Instant::now();
    hdf5_io::save(&ds, &path)?;
    timings.write = t0.elapsed().as_secs_f64();
    Ok((path, timings))
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

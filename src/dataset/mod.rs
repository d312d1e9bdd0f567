//! Datasets in the ann-benchmarks HDF5 layout: reading, writing, validation, the registry of
//! known names, downloads, synthetic sets, subsets, user vectors and exact ground truth.

use crate::Metric;
use ndarray::Array2;

/// An ann-benchmarks dataset held in memory. Row-major f32 matrices; loaded once, never copied
/// (the Python layer hands these arrays to numpy without a copy).
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Dataset name, e.g. `fashion-mnist-784-euclidean` (the file stem for local files).
    pub name: String,
    /// Distance the ground truth was computed with.
    pub metric: Metric,
    /// Base vectors, n x d.
    pub train: Array2<f32>,
    /// Query vectors, q x d.
    pub test: Array2<f32>,
    /// Exact ground truth, when present: ids (q x K, K usually 100) and distances (q x K).
    pub ground_truth: Option<GroundTruth>,
}

/// Exact nearest neighbours of each test vector, nearest first.
#[derive(Debug, Clone)]
pub struct GroundTruth {
    /// Train row ids, q x K.
    pub neighbors: Array2<i32>,
    /// Their distances, q x K, ascending per row.
    pub distances: Array2<f32>,
}

impl Dataset {
    /// Vector dimension.
    pub fn dimension(&self) -> usize {
        self.train.ncols()
    }
}

pub mod bars;
pub mod bundled;
pub mod create;
pub mod datadir;
pub mod datafile;
pub mod difficulty;
pub mod download;
pub mod embeddings;
pub mod filters;
pub mod fingerprint;
pub mod groundtruth;
pub mod gtcheck;
pub mod hdf5_io;
pub mod registry;
pub mod rng;
pub mod subset;
pub mod synthetic;
pub mod validate;
pub mod vectors;

pub use datadir::{default_data_dir, resolve};
pub use fingerprint::fingerprint;
pub use hdf5_io::{Info, info, open, open_vectors, save};

//! The fingerprint of the data a point is measured on: the metric, every bit of `train` and
//! `test`, and the ground truth's first `k` columns (ids and distances: what recall is computed
//! from). Stored with every point; a stored point is reused only for data with the same
//! fingerprint, so a different file under the same name is measured again, not reported from
//! stale points.
//!
//! xxHash3-128 over fixed 4 MiB chunks hashed in parallel, then over the chunk digests in order:
//! the value does not depend on the thread count, and a 1M x 1536 train set (6 GB) takes about
//! a second on two cores.

use super::Dataset;
use ndarray::ArrayView2;
use rayon::prelude::*;
use twox_hash::XxHash3_128;

/// Bytes per chunk hashed on its own (fixed: part of the fingerprint's definition).
const CHUNK: usize = 4 << 20;

/// 32 hex digits naming `ds` with its ground truth cut to `k` columns (all when narrower).
pub fn fingerprint(ds: &Dataset, k: usize) -> String {
    let mut h = XxHash3_128::new();
    h.write(b"annbench dataset fingerprint v1\0");
    h.write(ds.metric.as_str().as_bytes());
    for m in [ds.train.view(), ds.test.view()] {
        h.write(&matrix_digest(m).to_le_bytes());
    }
    match &ds.ground_truth {
        None => h.write(b"no ground truth"),
        Some(gt) => {
            let k = k.min(gt.neighbors.ncols());
            h.write(&(k as u64).to_le_bytes());
            let ids = gt.neighbors.slice(ndarray::s![.., ..k]);
            let dist = gt.distances.slice(ndarray::s![.., ..k]);
            for (ids, dist) in ids.rows().into_iter().zip(dist.rows()) {
                for (&i, &d) in ids.iter().zip(dist.iter()) {
                    h.write(&i.to_le_bytes());
                    h.write(&d.to_bits().to_le_bytes());
                }
            }
        }
    }
    format!("{:032x}", h.finish_128())
}

/// 32 hex digits naming the metric and the train and test vectors alone (no ground truth): ties
/// a filter sidecar (`super::filters`) to the vectors it was made for.
pub fn vectors_digest(ds: &Dataset) -> String {
    let mut h = XxHash3_128::new();
    h.write(b"annbench vectors digest v1\0");
    h.write(ds.metric.as_str().as_bytes());
    for m in [ds.train.view(), ds.test.view()] {
        h.write(&matrix_digest(m).to_le_bytes());
    }
    format!("{:032x}", h.finish_128())
}

/// Digest of a matrix's shape and values (little-endian bit patterns, row-major).
fn matrix_digest(m: ArrayView2<'_, f32>) -> u128 {
    let owned;
    let values: &[f32] = match m.as_slice() {
        Some(s) => s,
        None => {
            owned = m.as_standard_layout().into_owned();
            owned.as_slice().unwrap_or_default()
        }
    };
    let bytes = f32_bytes(values);
    let digests: Vec<u128> = bytes.par_chunks(CHUNK).map(XxHash3_128::oneshot).collect();
    let mut h = XxHash3_128::new();
    h.write(&(m.nrows() as u64).to_le_bytes());
    h.write(&(m.ncols() as u64).to_le_bytes());
    for d in digests {
        h.write(&d.to_le_bytes());
    }
    h.finish_128()
}

/// The bytes of an f32 slice (little-endian on every platform annbench builds for).
fn f32_bytes(v: &[f32]) -> &[u8] {
    // SAFETY: any f32 is 4 initialised bytes; u8 has no alignment requirement.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metric;
    use crate::dataset::GroundTruth;
    use ndarray::{Array2, array};

    fn ds() -> Dataset {
        Dataset {
            name: "t".into(),
            metric: Metric::Euclidean,
            train: Array2::from_shape_fn((300, 3), |(i, j)| (i * 3 + j) as f32),
            test: array![[0.5f32, 1.0, 2.0]],
            ground_truth: Some(GroundTruth {
                neighbors: array![[0, 1, 2]],
                distances: array![[1.0f32, 2.0, 3.0]],
            }),
        }
    }

    #[test]
    fn every_part_of_the_data_changes_the_fingerprint() {
        let base = fingerprint(&ds(), 2);
        assert_eq!(base.len(), 32);
        assert_eq!(base, fingerprint(&ds(), 2), "deterministic");
        let mut d = ds();
        d.train[[299, 2]] += 1.0;
        assert_ne!(fingerprint(&d, 2), base, "train");
        let mut d = ds();
        d.test[[0, 0]] = -0.5;
        assert_ne!(fingerprint(&d, 2), base, "test");
        let mut d = ds();
        d.metric = Metric::Angular;
        assert_ne!(fingerprint(&d, 2), base, "metric");
        let mut d = ds();
        d.ground_truth.as_mut().unwrap().distances[[0, 1]] = 0.0;
        assert_ne!(fingerprint(&d, 2), base, "ground truth within k");
        let mut d = ds();
        d.ground_truth.as_mut().unwrap().distances[[0, 2]] = 0.0;
        assert_eq!(fingerprint(&d, 2), base, "columns past k do not count");
        let mut d = ds();
        d.train = d.train.into_shape_with_order((450, 2)).unwrap();
        assert_ne!(fingerprint(&d, 2), base, "shape");
        d.ground_truth = None;
        assert_ne!(fingerprint(&d, 2), base);
    }

    #[test]
    fn chunking_does_not_depend_on_layout() {
        let d = ds();
        let t = d.train.t().to_owned();
        let back = t.t();
        assert_eq!(matrix_digest(back), matrix_digest(d.train.view()));
    }
}

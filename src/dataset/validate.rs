//! Consistency checks shared by every way a dataset enters annbench (HDF5 files, user vectors,
//! subsets). Pure functions over arrays: the caller adds the file name to the message.

use super::{Dataset, GroundTruth};
use ndarray::{ArrayView1, ArrayView2};
use rayon::prelude::*;

/// The largest squared length a vector may have: a quarter of float32's range, so that the
/// squared distance of any two such vectors, at most (|q| + |x|)^2 = 4 x that, stays finite in
/// float32, in which both servers compute distances (pgvector, MariaDB) and the ground truth's
/// ranking runs. Beyond it every distance could be infinite and every recall 0.
pub const MAX_SQUARED_LENGTH: f64 = f32::MAX as f64 / 4.0;

/// The squared length of a vector, in f64 (never overflows for float32 values).
pub fn squared_length(row: ArrayView1<'_, f32>) -> f64 {
    row.iter().map(|&x| f64::from(x) * f64::from(x)).sum()
}

/// What is wrong with `row` (numbered `i` of `what`): a NaN or infinite value, or a squared
/// length beyond [`MAX_SQUARED_LENGTH`]; `None` for a good row.
pub fn bad_row(what: &str, i: usize, row: ArrayView1<'_, f32>) -> Option<String> {
    if let Some(j) = row.iter().position(|v| !v.is_finite()) {
        return Some(format!(
            "'{what}' row {i} column {j} is {} (values must be finite numbers); clean or drop \
             that vector",
            row[j]
        ));
    }
    let sq = squared_length(row);
    (sq > MAX_SQUARED_LENGTH).then(|| {
        format!(
            "'{what}' row {i} has a squared length of {sq:.3e}: squared distances to it reach \
             {:.1e}, beyond float32's range (3.4e38), in which the servers compute distances \
             (they would be infinite, and every recall 0); scale all vectors down by one \
             factor (squared lengths up to {MAX_SQUARED_LENGTH:.1e} fit)",
            4.0 * sq
        )
    })
}

/// Checks a whole dataset: non-empty train/test of one dimension, finite values, and ground
/// truth (if any) of matching shape with ids inside train. Returns what is wrong, without the
/// file name (callers prefix it).
pub fn check(ds: &Dataset) -> Result<(), String> {
    check_vectors("train", ds.train.view())?;
    check_vectors("test", ds.test.view())?;
    if ds.train.ncols() != ds.test.ncols() {
        return Err(format!(
            "dimension mismatch: train has {} columns but test has {}",
            ds.train.ncols(),
            ds.test.ncols()
        ));
    }
    if let Some(gt) = &ds.ground_truth {
        check_ground_truth(gt, ds.train.nrows(), ds.test.nrows())?;
    }
    Ok(())
}

/// A non-empty matrix of finite values whose squared distances fit float32 (see
/// [`MAX_SQUARED_LENGTH`]); names the first bad row.
pub fn check_vectors(what: &str, m: ArrayView2<f32>) -> Result<(), String> {
    if m.nrows() == 0 || m.ncols() == 0 {
        return Err(format!(
            "'{what}' is empty ({} x {}); it needs at least one row and one column",
            m.nrows(),
            m.ncols()
        ));
    }
    let bad = m
        .outer_iter()
        .into_par_iter()
        .enumerate()
        .find_map_first(|(i, row)| bad_row(what, i, row));
    match bad {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `neighbors` and `distances` of the same q x K shape, ids in `0..n_train`, distances finite.
pub fn check_ground_truth(gt: &GroundTruth, n_train: usize, n_test: usize) -> Result<(), String> {
    let (ns, ds) = (gt.neighbors.dim(), gt.distances.dim());
    if ns != ds {
        return Err(format!(
            "'neighbors' is {} x {} but 'distances' is {} x {}; they must have the same shape \
             (recompute with `annbench datasets groundtruth FILE`)",
            ns.0, ns.1, ds.0, ds.1
        ));
    }
    if ns.0 != n_test {
        return Err(format!(
            "'neighbors' has {} rows but 'test' has {}; recompute with \
             `annbench datasets groundtruth FILE`",
            ns.0, n_test
        ));
    }
    if let Some(bad) = gt
        .neighbors
        .iter()
        .find(|&&id| id < 0 || id as usize >= n_train)
    {
        return Err(format!(
            "'neighbors' holds id {bad}, outside train (0..{n_train}); recompute with \
             `annbench datasets groundtruth FILE`"
        ));
    }
    if gt.distances.iter().any(|d| !d.is_finite()) {
        return Err("'distances' holds a non-finite value; recompute with \
                    `annbench datasets groundtruth FILE`"
            .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metric;
    use ndarray::{Array2, array};

    fn ds(train: Array2<f32>, test: Array2<f32>) -> Dataset {
        Dataset {
            name: "t".into(),
            metric: Metric::Euclidean,
            train,
            test,
            ground_truth: None,
        }
    }

    #[test]
    fn accepts_consistent_and_rejects_mismatch() {
        assert!(check(&ds(array![[1.0, 2.0]], array![[3.0, 4.0]])).is_ok());
        let err = check(&ds(array![[1.0, 2.0]], array![[3.0]])).unwrap_err();
        assert!(err.contains("dimension mismatch"), "{err}");
    }

    #[test]
    fn names_the_nan_row() {
        let err = check(&ds(array![[1.0, 2.0], [0.0, f32::NAN]], array![[3.0, 4.0]])).unwrap_err();
        assert!(
            err.contains("row 1 column 1") && err.contains("NaN"),
            "{err}"
        );
    }

    #[test]
    fn names_the_row_whose_squared_distances_overflow_float32() {
        // 1e20 squared is 1e40: past float32's 3.4e38, as a server computes it.
        let err = check(&ds(array![[1.0, 2.0], [1e20, 0.0]], array![[3.0, 4.0]])).unwrap_err();
        assert!(
            err.contains("'train' row 1") && err.contains("float32") && err.contains("scale"),
            "{err}"
        );
        let err = check(&ds(array![[1.0, 2.0]], array![[9e18, 9e18]])).unwrap_err();
        assert!(err.contains("'test' row 0"), "{err}");
        // Up to a quarter of the range (any two rows' squared distance stays finite).
        let edge = (MAX_SQUARED_LENGTH.sqrt() * 0.999) as f32;
        assert!(check(&ds(array![[edge, 0.0]], array![[-edge, 0.0]])).is_ok());
        assert!((f64::from(edge) * 2.0).powi(2) < f64::from(f32::MAX));
    }

    #[test]
    fn rejects_out_of_range_ids() {
        let gt = GroundTruth {
            neighbors: array![[0, 5]],
            distances: array![[0.0, 1.0]],
        };
        let err = check_ground_truth(&gt, 2, 1).unwrap_err();
        assert!(err.contains("id 5"), "{err}");
        assert!(check_ground_truth(&gt, 6, 1).is_ok());
        assert!(check_ground_truth(&gt, 6, 2).is_err());
    }
}

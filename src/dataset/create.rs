//! Building a dataset from vectors: a seeded train/test split (or separate query vectors),
//! value checks, then exact ground truth. `annbench datasets create` and the bundled sets use it.

use super::rng::Rng;
use super::vectors::{self, Format};
use super::{Dataset, validate};
use crate::{Error, Metric, Result};
use ndarray::{Array2, Axis};
use std::path::{Path, PathBuf};

/// What `create` builds from.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// Vector file.
    pub input: PathBuf,
    /// Its format; `None` infers from the extension (or raw with `dim`).
    pub format: Option<Format>,
    /// Dimension for raw float32 input.
    pub dim: Option<usize>,
    /// Separate query vectors (same formats); when given, nothing is split off `input`.
    pub queries: Option<PathBuf>,
    /// Dataset name (default: the input file stem plus `-{dim}-{metric}`).
    pub name: Option<String>,
    /// Distance.
    pub metric: Metric,
    /// Test rows split off `input` (default: 10% capped at 10,000).
    pub test: Option<usize>,
    /// Split seed.
    pub seed: u64,
    /// Ground-truth neighbours per query.
    pub k: usize,
}

/// Default test rows for `n` vectors: 10%, at least 1, at most 10,000 (as ann-benchmarks).
pub fn default_test_rows(n: usize) -> usize {
    (n / 10).clamp(1, 10_000)
}

/// Why `n` vectors cannot be split with `test_rows` test vectors, in words that hold for every
/// `n`: with fewer than 2 there is no valid `--test` at all (never "between 1 and 0").
fn split_message(n: usize, test_rows: usize) -> String {
    let vectors = |k: usize| format!("{k} vector{}", if k == 1 { "" } else { "s" });
    if n < 2 {
        format!(
            "cannot split {} into train and test: --test needs at least 1 row and train at \
             least 1, but the file has {}; give more vectors, or the queries in a file of \
             their own with --queries",
            vectors(n),
            vectors(n)
        )
    } else if test_rows == 0 {
        format!(
            "--test 0: the test split needs at least 1 row (give 1 to {})",
            n - 1
        )
    } else {
        format!(
            "--test {test_rows}: the file has {}, and at least 1 must stay for train; give \
             --test 1 to {}",
            vectors(n),
            n - 1
        )
    }
}

/// Splits rows into (train, test) with a seeded shuffle; each part keeps the input order.
/// The train part reuses `data`'s allocation (rows are moved down over the test rows), so a
/// split holds the data once, plus the test rows.
pub fn split(data: Array2<f32>, test_rows: usize, seed: u64) -> Result<(Array2<f32>, Array2<f32>)> {
    let (n, d) = data.dim();
    if test_rows == 0 || test_rows >= n {
        return Err(Error::Config(split_message(n, test_rows)));
    }
    let mut perm: Vec<usize> = (0..n).collect();
    Rng::new(seed).shuffle(&mut perm);
    let test_ids = &mut perm[..test_rows];
    test_ids.sort_unstable();
    let test = data.select(Axis(0), test_ids);
    let data = if data.is_standard_layout() {
        data
    } else {
        data.as_standard_layout().into_owned()
    };
    let (mut v, _) = data.into_raw_vec_and_offset();
    let (mut kept, mut next_test) = (0, 0);
    for i in 0..n {
        if test_ids.get(next_test) == Some(&i) {
            next_test += 1;
            continue;
        }
        if kept != i {
            v.copy_within(i * d..(i + 1) * d, kept * d);
        }
        kept += 1;
    }
    v.truncate(kept * d);
    v.shrink_to_fit();
    let train = Array2::from_shape_vec((kept, d), v)
        .map_err(|e| Error::Dataset(format!("splitting the vectors: {e}")))?;
    Ok((train, test))
}

/// Builds a dataset with ground truth from in-memory vectors.
pub fn from_parts(
    name: &str,
    metric: Metric,
    train: Array2<f32>,
    test: Array2<f32>,
    k: usize,
) -> Result<Dataset> {
    super::datafile::check_name(name)?;
    let mut ds = Dataset {
        name: name.to_owned(),
        metric,
        train,
        test,
        ground_truth: None,
    };
    validate::check(&ds).map_err(|e| Error::Dataset(format!("{name}: {e}")))?;
    let (gt, _) = super::bars::ground_truth(ds.train.view(), ds.test.view(), metric, k)?;
    ds.ground_truth = Some(gt);
    Ok(ds)
}

/// Reads and checks one vector file.
fn load(path: &Path, format: Option<Format>, dim: Option<usize>) -> Result<Array2<f32>> {
    let format = match format {
        Some(f) => f,
        None => Format::infer(path, dim)?,
    };
    let m = vectors::read(path, format)?;
    validate::check_vectors("vectors", m.view())
        .map_err(|e| Error::Dataset(format!("{}: {e}", path.display())))?;
    Ok(m)
}

/// `annbench datasets create`: reads the vectors, splits (or reads queries), computes ground truth.
pub fn create(opts: &CreateOptions) -> Result<Dataset> {
    if let Some(name) = &opts.name {
        super::datafile::check_name(name)?;
    }
    let data = load(&opts.input, opts.format, opts.dim)?;
    let (train, test) = match &opts.queries {
        Some(q) => {
            let test = load(q, opts.format, opts.dim)?;
            if test.ncols() != data.ncols() {
                return Err(Error::Dataset(format!(
                    "dimension mismatch: {} has {} columns but {} has {}",
                    opts.input.display(),
                    data.ncols(),
                    q.display(),
                    test.ncols()
                )));
            }
            (data, test)
        }
        None => {
            let t = opts.test.unwrap_or_else(|| default_test_rows(data.nrows()));
            split(data, t, opts.seed)?
        }
    };
    let name = opts.name.clone().unwrap_or_else(|| {
        let stem = super::hdf5_io::name_of(&opts.input);
        format!("{stem}-{}-{}", train.ncols(), opts.metric)
    });
    from_parts(&name, opts.metric, train, test, opts.k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_seeded_disjoint_and_complete() {
        let data = Array2::from_shape_fn((50, 2), |(i, j)| (i * 2 + j) as f32);
        let (a, b) = split(data.clone(), 5, 9).unwrap();
        let (a2, b2) = split(data.clone(), 5, 9).unwrap();
        assert_eq!((a.nrows(), b.nrows()), (45, 5));
        assert_eq!((&a, &b), (&a2, &b2));
        let mut firsts: Vec<f32> = a
            .column(0)
            .iter()
            .chain(b.column(0).iter())
            .copied()
            .collect();
        firsts.sort_by(f32::total_cmp);
        assert_eq!(firsts, (0..50).map(|i| (i * 2) as f32).collect::<Vec<_>>());
        assert_ne!(split(data.clone(), 5, 10).unwrap().1, b);
        assert!(split(data.clone(), 50, 1).is_err() && split(data.clone(), 0, 1).is_err());
        // A non-standard layout (a transposed view made owned) splits the same way.
        let t = data.t().to_owned().reversed_axes();
        assert_eq!(split(t, 5, 9).unwrap(), (a, b));
    }
}

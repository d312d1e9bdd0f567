//! Smaller datasets derived from a larger one: the first N train and first M test vectors,
//! with ground truth recomputed over the reduced train set (the old neighbours are no longer
//! valid once train rows are dropped). Only the kept rows are read from the file.

use super::{Dataset, create, hdf5_io};
use crate::{Metric, Result};
use std::path::Path;

/// The first `train` train rows and first `test` test rows (all test rows when `None`) of
/// `src`, with exact ground truth for `k` neighbours, named `name`.
pub fn subset(
    src: &Path,
    train: usize,
    test: Option<usize>,
    k: usize,
    name: &str,
) -> Result<Dataset> {
    super::datafile::check_name(name)?;
    let test = match test {
        Some(t) => t,
        None => hdf5_io::info(src)?.test,
    };
    let head = hdf5_io::open_head(src, train, test)?;
    create::from_parts(name, head.metric, head.train, head.test, k)
}

/// Default name of a subset: the size goes before the metric suffix, thousands as `k`
/// (`glove-25-angular`, 100,000 -> `glove-25-100k-angular`), so names still end in the metric.
pub fn default_name(source: &str, metric: Metric, train: usize) -> String {
    let size = if train % 1000 == 0 {
        format!("{}k", train / 1000)
    } else {
        train.to_string()
    };
    let stem = source.strip_suffix(&format!("-{metric}")).unwrap_or(source);
    format!("{stem}-{size}-{metric}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_keep_the_metric_last() {
        assert_eq!(
            default_name("glove-25-angular", Metric::Angular, 100_000),
            "glove-25-100k-angular"
        );
        assert_eq!(
            default_name("mine", Metric::Euclidean, 1234),
            "mine-1234-euclidean"
        );
    }
}

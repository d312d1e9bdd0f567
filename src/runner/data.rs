//! The sweep's dataset: resolve and open it, and make sure exact ground truth at least k wide
//! exists for exactly these queries (computed in memory when missing or too narrow).

use super::progress::{Event, Progress};
use crate::dataset::{self, Dataset};
use crate::{Error, Result};

/// Compute exact ground truth when it is missing, narrower than `k`, or for other queries.
pub fn ensure_ground_truth(data: &mut Dataset, k: usize, progress: &dyn Progress) -> Result<()> {
    let n = data.train.nrows();
    if k > n {
        return Err(Error::Config(format!(
            "--count {k} is larger than the {n} train vectors of '{}'",
            data.name
        )));
    }
    if data.test.nrows() == 0 {
        return Err(Error::Dataset(format!(
            "'{}' has no test queries",
            data.name
        )));
    }
    if data.train.ncols() != data.test.ncols() {
        return Err(Error::Dataset(format!(
            "'{}': train has {} dimensions but test has {}",
            data.name,
            data.train.ncols(),
            data.test.ncols()
        )));
    }
    let fits = data
        .ground_truth
        .as_ref()
        .is_some_and(|g| g.distances.ncols() >= k && g.distances.nrows() == data.test.nrows());
    if fits {
        return Ok(());
    }
    // ann-benchmarks files carry 100 neighbours; computing that many costs the same as k.
    let width = k.max(100).min(n);
    progress.on_event(&Event::GroundTruth {
        queries: data.test.nrows(),
        k: width,
    });
    data.ground_truth = Some(dataset::groundtruth::try_compute(
        data.train.view(),
        data.test.view(),
        data.metric,
        width,
    )?);
    Ok(())
}

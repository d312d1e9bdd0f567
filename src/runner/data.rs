//! The sweep's dataset: resolve and open it, and make sure exact ground truth at least k wide
//! exists for exactly these queries (computed in memory when missing or too narrow).

use super::progress::{Event, Progress};
use crate::dataset::{self, Dataset};
use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

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
    let (train, test) = (data.train.view(), data.test.view());
    dataset::groundtruth::check_input(train, test, width)?;
    let total = dataset::groundtruth::work_units(train.nrows(), test.nrows());
    let computed = observed(progress, total, |observe| {
        dataset::groundtruth::compute_observed(train, test, data.metric, width, observe)
    });
    match computed {
        Ok(Some((gt, _))) => {
            data.ground_truth = Some(gt);
            Ok(())
        }
        Ok(None) => Err(Error::Interrupted),
        Err(_) => Err(Error::Dataset(
            "the ground-truth computation panicked".into(),
        )),
    }
}

/// Runs `work` on a helper thread and, from this (the sweep's) thread, sends
/// [`Event::GroundTruthProgress`] of its `total` units and relays Ctrl-C, as progress
/// implementations expect: `work` gets the observer to pass to the computation, which adds
/// the units done and returns false once the run is cancelled. No event is sent before the
/// first report.
pub(super) fn observed<T: Send>(
    progress: &dyn Progress,
    total: u64,
    work: impl FnOnce(&(dyn Fn(u64) -> bool + Sync)) -> T + Send,
) -> std::thread::Result<T> {
    let done = AtomicU64::new(0);
    let started = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let observe = |n: u64| {
        started.store(true, Ordering::Relaxed);
        done.fetch_add(n, Ordering::Relaxed);
        !stop.load(Ordering::Relaxed)
    };
    std::thread::scope(|s| {
        let worker = s.spawn(|| work(&observe));
        loop {
            let finished = worker.is_finished();
            // Work that never reports (a cache hit) shows no bar.
            if started.load(Ordering::Relaxed) {
                progress.on_event(&Event::GroundTruthProgress {
                    done: done.load(Ordering::Relaxed).min(total),
                    total,
                });
            }
            if finished {
                break;
            }
            if progress.cancelled() {
                stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        worker.join()
    })
}

//! Progress bars of long dataset work (generation, ground truth), shown on stderr by the CLI
//! only: the library and the Python module stay silent unless [`enable`] is called.

use super::groundtruth;
use crate::{Metric, Result};
use indicatif::{ProgressBar, ProgressStyle};
use ndarray::ArrayView2;
use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Show bars from now on (the CLI calls this once).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// A bar of `len` units labelled `what`; hidden unless enabled (and on a non-terminal).
pub fn bar(len: u64, what: &str) -> ProgressBar {
    if !ENABLED.load(Ordering::Relaxed) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{msg} [{bar:30}] {percent:>3}% {elapsed} eta {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(crate::terminal::for_terminal(what));
    bar
}

/// Exact ground truth with a bar (see [`groundtruth::compute_with_stats`]).
pub fn ground_truth(
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    metric: Metric,
    k: usize,
) -> Result<(super::GroundTruth, groundtruth::Stats)> {
    groundtruth::check_input(train, test, k)?;
    let units = groundtruth::work_units(train.nrows(), test.nrows());
    let bar = bar(units, &format!("ground truth, {} queries", test.nrows()));
    let out = groundtruth::compute_observed(train, test, metric, k, &|n| {
        bar.inc(n);
        true
    });
    bar.finish_and_clear();
    Ok(out.unwrap_or_else(|| unreachable!("the observer never stops")))
}

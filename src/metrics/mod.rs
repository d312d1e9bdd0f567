//! Pure metric functions (no I/O): recall (k-nn and epsilon rules of ann-benchmarks), QPS,
//! latency percentiles, and (in [`interval`]) the confidence intervals of medians and ratios.
//!
//! Recall follows ann-benchmarks: a returned neighbour counts when its distance (recomputed by
//! the client) is within a threshold of the true k-th distance; the count is divided by k and
//! averaged over queries. Distances of missing answers are `+inf` and never count. The k-nn
//! rule's tolerance is ann-benchmarks' `+1e-3` wherever the k-th distance is 0.1 or more, and
//! 1% of the k-th distance below ([`knn_threshold`]): an absolute `1e-3` on data of a small
//! scale (distances of 1e-20) counts every answer, so the recall would say nothing.

pub mod changepoint;
pub mod interval;

use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// Tolerance of the k-nn rule (ann-benchmarks'): `true_dist[k-1] + 1e-3`, where the k-th
/// distance is at least [`KNN_RELATIVE_FROM`].
pub const KNN_EPSILON: f32 = 1e-3;
/// Below this k-th distance the k-nn tolerance is [`KNN_RELATIVE`] of it instead of
/// [`KNN_EPSILON`] (the two meet here: 1% of 0.1 is 1e-3).
pub const KNN_RELATIVE_FROM: f32 = 0.1;
/// The k-nn tolerance below [`KNN_RELATIVE_FROM`]: a share of the k-th distance, the epsilon
/// rule's 1%, so the k-nn rule is never looser than the epsilon rule.
pub const KNN_RELATIVE: f32 = 0.01;
/// The k-nn rule, as stored with every point (`recall_rule`).
pub const KNN_RULE: &str = "kth + min(1e-3, 0.01 * kth)";
/// Tolerance of the epsilon rule: `true_dist[k-1] * (1 + 0.01)`.
pub const EPSILON_EPSILON: f32 = 0.01;

/// Per-query recall count under a threshold rule; `None` when `k` is 0 or the ground truth is
/// narrower than `k` or has fewer rows than `run`.
fn recall_with(
    true_distances: ArrayView2<'_, f32>,
    run_distances: ArrayView2<'_, f32>,
    k: usize,
    threshold: impl Fn(f32) -> f32,
) -> Option<f64> {
    if k == 0 || true_distances.ncols() < k || true_distances.nrows() < run_distances.nrows() {
        return None;
    }
    if run_distances.nrows() == 0 {
        return Some(0.0);
    }
    let mut total = 0usize;
    for (truth, run) in true_distances.rows().into_iter().zip(run_distances.rows()) {
        let t = threshold(truth[k - 1]);
        total += run.iter().take(k).filter(|&&d| d <= t).count();
    }
    Some(total as f64 / k as f64 / run_distances.nrows() as f64)
}

/// The largest returned distance the k-nn rule counts for a true k-th distance `kth`:
/// `kth + min(1e-3, 0.01 * kth)`. ann-benchmarks' `kth + 1e-3` wherever `kth >= 0.1` (every
/// published dataset's usual scale); below, 1% of `kth`, so that data of a small scale (all
/// distances below 1e-3) does not count every answer as a neighbour.
pub fn knn_threshold(kth: f32) -> f32 {
    kth + KNN_EPSILON.min(KNN_RELATIVE * kth.abs())
}

/// The largest returned distance the epsilon rule counts: `kth * 1.01`.
pub fn epsilon_threshold(kth: f32) -> f32 {
    kth * (1.0 + EPSILON_EPSILON)
}

/// k-nn recall (ann-benchmarks' rule with the tolerance of [`knn_threshold`]): returned
/// distances `<= true_dist[k-1] + min(1e-3, 0.01 * true_dist[k-1])`, / k, mean.
/// `None` when the ground truth is narrower than `k`.
pub fn knn_recall(
    true_distances: ArrayView2<'_, f32>,
    run_distances: ArrayView2<'_, f32>,
    k: usize,
) -> Option<f64> {
    recall_with(true_distances, run_distances, k, knn_threshold)
}

/// ann-benchmarks' epsilon recall: returned distances `<= true_dist[k-1] * 1.01`, / k, mean.
pub fn epsilon_recall(
    true_distances: ArrayView2<'_, f32>,
    run_distances: ArrayView2<'_, f32>,
    k: usize,
) -> Option<f64> {
    recall_with(true_distances, run_distances, k, epsilon_threshold)
}

/// Measured throughput: queries / wall seconds (0 for an empty or zero-length pass).
pub fn qps(queries: usize, wall_seconds: f64) -> f64 {
    if wall_seconds > 0.0 {
        queries as f64 / wall_seconds
    } else {
        0.0
    }
}

/// Arithmetic mean (0 for no samples).
pub fn mean(samples: &[f64]) -> f64 {
    if samples.is_empty() {
        0.0
    } else {
        samples.iter().sum::<f64>() / samples.len() as f64
    }
}

/// Exact percentile `p` (0..=100) of ascending-sorted samples, interpolating linearly between
/// the two nearest order statistics (numpy's default, as ann-benchmarks uses). 0 for no samples.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0],
        n => {
            let rank = (p.clamp(0.0, 100.0) / 100.0) * (n - 1) as f64;
            let lo = rank.floor() as usize;
            let hi = rank.ceil() as usize;
            let frac = rank - lo as f64;
            sorted[lo] + (sorted[hi] - sorted[lo]) * frac
        }
    }
}

/// Latency summary of a pass (or a point), in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencySummary {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    /// The slowest query (`#[serde(default)]`: absent from older files).
    #[serde(default)]
    pub max: f64,
}

/// Exact percentiles of the union of every client's raw latencies. Merging raw samples (not
/// per-client percentiles) keeps the result exact however the queries were split.
pub fn summarize_latencies<'a>(parts: impl IntoIterator<Item = &'a [f64]>) -> LatencySummary {
    let mut all: Vec<f64> = parts.into_iter().flatten().copied().collect();
    summarize_in_place(&mut all)
}

/// [`summarize_latencies`] of `all`, sorting it in place (no copy).
pub fn summarize_in_place(all: &mut [f64]) -> LatencySummary {
    all.sort_by(f64::total_cmp);
    let all: &[f64] = all;
    LatencySummary {
        max: all.last().copied().unwrap_or(0.0),
        mean: mean(all),
        p50: percentile_sorted(all, 50.0),
        p95: percentile_sorted(all, 95.0),
        p99: percentile_sorted(all, 99.0),
        p999: percentile_sorted(all, 99.9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn knn_recall_by_hand() {
        // k = 2; true 2nd distances 2.0 and 1.0.
        let truth = array![[1.0f32, 2.0, 3.0], [0.5, 1.0, 9.0]];
        // Query 0: 1.0 and 2.0005 (within +1e-3) -> 2. Query 1: 0.5 and 1.002 (outside) -> 1.
        let run = array![[1.0f32, 2.0005], [0.5, 1.002]];
        assert_eq!(knn_recall(truth.view(), run.view(), 2), Some(0.75));
    }

    #[test]
    fn the_knn_tolerance_is_relative_on_data_of_a_small_scale() {
        // Ordinary scale: ann-benchmarks' +1e-3, exactly.
        assert_eq!(knn_threshold(2.0), 2.0 + 1e-3);
        assert_eq!(knn_threshold(0.5), 0.5 + 1e-3);
        // Below 0.1: 1% of the k-th distance, never looser than the epsilon rule.
        assert!((knn_threshold(0.05) - 0.0505).abs() < 1e-8);
        assert!(knn_threshold(1e-20) <= epsilon_threshold(1e-20));
        assert_eq!(knn_threshold(0.0), 0.0);
        // Vectors scaled by 1e-20: true k-th distance 1e-20, answers 5 and 9 times farther.
        // An absolute +1e-3 counted both (recall 1.0); the rule counts neither.
        let truth = array![[0.5e-20f32, 1e-20]];
        let run = array![[5e-20f32, 9e-20]];
        assert_eq!(knn_recall(truth.view(), run.view(), 2), Some(0.0));
        let near = array![[0.5e-20f32, 1.005e-20]];
        assert_eq!(knn_recall(truth.view(), near.view(), 2), Some(1.0));
    }

    #[test]
    fn epsilon_recall_by_hand() {
        let truth = array![[1.0f32, 2.0], [0.5, 1.0]];
        // 2.0 * 1.01 = 2.02 -> 2.015 counts; 1.0 * 1.01 = 1.01 -> 1.02 does not.
        let run = array![[1.0f32, 2.015], [0.5, 1.02]];
        assert_eq!(epsilon_recall(truth.view(), run.view(), 2), Some(0.75));
        assert_eq!(knn_recall(truth.view(), run.view(), 2), Some(0.5));
    }

    #[test]
    fn missing_answers_never_count_and_narrow_truth_is_refused() {
        let truth = array![[1.0f32, 2.0]];
        let run = array![[1.0f32, f32::INFINITY]];
        assert_eq!(knn_recall(truth.view(), run.view(), 2), Some(0.5));
        assert_eq!(knn_recall(truth.view(), run.view(), 3), None);
    }

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&s, 50.0), 2.5);
        assert_eq!(percentile_sorted(&s, 0.0), 1.0);
        assert_eq!(percentile_sorted(&s, 100.0), 4.0);
        // rank = 0.99 * 3 = 2.97 -> 3 + 0.97
        assert!((percentile_sorted(&s, 99.0) - 3.97).abs() < 1e-12);
        assert_eq!(percentile_sorted(&[], 50.0), 0.0);
    }

    #[test]
    fn merged_percentiles_equal_those_of_the_concatenation() {
        let a = [0.004, 0.001, 0.009];
        let b = [0.002, 0.007];
        let c = [0.003, 0.010, 0.005, 0.006];
        let merged = summarize_latencies([&a[..], &b[..], &c[..]]);
        let concat: Vec<f64> = a.iter().chain(&b).chain(&c).copied().collect();
        assert_eq!(merged, summarize_latencies([&concat[..]]));
        // 9 samples 0.001..0.010 without 0.008: median is the 5th, 0.005.
        assert_eq!(merged.p50, 0.005);
        assert!((merged.mean - 0.047 / 9.0).abs() < 1e-15);
    }

    #[test]
    fn qps_by_hand() {
        assert_eq!(qps(100, 0.5), 200.0);
        assert_eq!(qps(100, 0.0), 0.0);
    }
}

//! Change points of a series by Apache Otava's method (formerly DataStax's Hunter; Fleming et
//! al., "Hunter: Using Change Point Detection to Hunt for Performance Regressions", ICPE 2023):
//!
//! 1. **Split.** Windows of `window` elements, each starting half a window after the last
//!    (or at the last change point found), are cut by E-divisive means (Matteson and James):
//!    the cut that maximises the energy statistic Q̂ between the part before it and a stretch
//!    after it, tested by a two-sided Student's t-test between the two neighbouring segments;
//!    cuts are added while the test passes at a relaxed p-value (10x the final one below 0.05),
//!    giving *weak* change points.
//! 2. **Merge.** The weakest of them is removed, and its neighbours re-tested against their new
//!    neighbouring segments, until every one left has a p-value below `max_pvalue` and a
//!    relative change above `min_magnitude`.
//!
//! The result matches `otava analyze` on the same series, option for option (`--window`,
//! `-P/--p-value`, `-M/--magnitude`); the test environment runs Otava itself on seeded series
//! to hold that (tests/python/test_history_otava.py). Two details follow Otava to the letter
//! because they decide which index wins: the segments' standard deviations are population ones
//! (numpy's `std`), and where every cut of a stretch has a negative Q̂ the cut at its second
//! element is taken with Q̂ = 0 (Otava's Q̂ matrix holds zeros where no cut exists).
//! A p-value that is not a number (two constant segments of equal mean) counts as 1.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Otava's defaults (`annbench history` keeps the p-value; see its window).
pub const DEFAULT_WINDOW: usize = 50;
pub const DEFAULT_MAX_PVALUE: f64 = 0.001;

/// The options of [`change_points`], with Otava's meaning.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Elements analysed at once (Otava's `--window`); at least 2.
    pub window: usize,
    /// A change point is kept when its p-value is below this (`-P`).
    pub max_pvalue: f64,
    /// ... and its relative change (the larger of forward and backward) above this (`-M`).
    pub min_magnitude: f64,
}

/// The two segments either side of a change point, and the t-test between them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub mean_before: f64,
    pub mean_after: f64,
    /// Population standard deviations (0 for a segment of one element).
    pub stddev_before: f64,
    pub stddev_after: f64,
    pub pvalue: f64,
}

impl Stats {
    /// `mean_after / mean_before - 1` (0 when the mean before is 0), as Otava's.
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    /// `mean_before / mean_after - 1` (0 when the mean after is 0).
    pub fn backward_change(&self) -> f64 {
        if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        }
    }

    /// The larger of the two relative changes, in absolute value.
    pub fn magnitude(&self) -> f64 {
        self.forward_change()
            .abs()
            .max(self.backward_change().abs())
    }
}

/// A change point: the first element of the new level, and its statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub stats: Stats,
}

/// The change points of `series`, by index. Fewer than 3 elements have none.
pub fn change_points(series: &[f64], opts: Options) -> Vec<ChangePoint> {
    let weak_pvalue = if opts.max_pvalue < 0.05 {
        opts.max_pvalue * 10.0
    } else if opts.max_pvalue < 0.5 {
        opts.max_pvalue * 2.0
    } else {
        opts.max_pvalue
    };
    let weak = split(series, opts.window.max(2), weak_pvalue);
    merge(weak, series, opts.max_pvalue, opts.min_magnitude)
}

/// The split step: weak change points over sliding windows.
fn split(series: &[f64], window: usize, max_pvalue: f64) -> Vec<ChangePoint> {
    let step = window / 2;
    let mut found: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window).min(series.len());
        let new = divide(&series[start..end], max_pvalue);
        let last = new.last().map_or(0, |i| i + start);
        for i in new {
            if !found.contains(&(i + start)) {
                found.push(i + start);
            }
        }
        start = last.max(start + step);
    }
    found.sort_unstable();
    with_stats(series, &found)
}

/// The merge step: drop the weakest change point until all are strong enough.
fn merge(
    mut points: Vec<ChangePoint>,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    while !points.is_empty() {
        // The highest p-value (the first of equals); when all pass, the smallest change.
        let mut weakest = first_best(&points, |a, b| a.stats.pvalue > b.stats.pvalue);
        if points[weakest].stats.pvalue < max_pvalue {
            weakest = first_best(&points, |a, b| a.stats.magnitude() < b.stats.magnitude());
            if points[weakest].stats.magnitude() > min_magnitude {
                return points;
            }
        }
        points.remove(weakest);
        let bounds: Vec<usize> = points.iter().map(|p| p.index).collect();
        for i in [weakest, weakest + 1] {
            if i < points.len() {
                points[i].stats = neighbours(series, &bounds, i);
            }
        }
    }
    points
}

/// The index of the first element of `items` that no later one beats.
fn first_best<T>(items: &[T], better: impl Fn(&T, &T) -> bool) -> usize {
    let mut best = 0;
    for (i, item) in items.iter().enumerate().skip(1) {
        if better(item, &items[best]) {
            best = i;
        }
    }
    best
}

/// Each of the sorted `indices` with the t-test between its two neighbouring segments.
fn with_stats(series: &[f64], indices: &[usize]) -> Vec<ChangePoint> {
    (0..indices.len())
        .map(|i| ChangePoint {
            index: indices[i],
            stats: neighbours(series, indices, i),
        })
        .collect()
}

/// The segments either side of `bounds[i]`, from the bound before it (or the start) to the
/// bound after it (or the end), and their t-test.
fn neighbours(series: &[f64], bounds: &[usize], i: usize) -> Stats {
    let from = if i == 0 { 0 } else { bounds[i - 1] };
    let to = bounds.get(i + 1).copied().unwrap_or(series.len());
    t_test(&series[from..bounds[i]], &series[bounds[i]..to])
}

/// E-divisive means over one window: the change points (window indices, sorted) found by
/// repeatedly cutting the segment whose best cut has the highest Q̂, while the cut passes the
/// t-test.
fn divide(window: &[f64], max_pvalue: f64) -> Vec<usize> {
    let dist = Distances::new(window);
    let mut cuts: Vec<usize> = Vec::new();
    loop {
        let segments = segments(&cuts, window.len());
        // The segment with the highest Q̂ (the first of equals) gives the candidate.
        let mut best: Option<(usize, f64, (usize, usize))> = None;
        for &(s, e) in segments.iter().filter(|(s, e)| e - s > 1) {
            let (tau, q) = dist.best_cut(s, e);
            if best.is_none_or(|(_, bq, _)| q > bq) {
                best = Some((tau, q, (s, e)));
            }
        }
        let Some((tau, _, (s, e))) = best else {
            return cuts;
        };
        if t_test(&window[s..tau], &window[tau..e]).pvalue > max_pvalue {
            return cuts;
        }
        cuts.push(tau);
        cuts.sort_unstable();
    }
}

/// The segments between consecutive cuts, as (start, end) ranges; empty ones left out.
fn segments(cuts: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(len);
    bounds
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|(s, e)| s != e)
        .collect()
}

/// Absolute differences between the elements of a window.
struct Distances {
    d: Vec<Vec<f64>>,
}

impl Distances {
    fn new(x: &[f64]) -> Distances {
        Distances {
            d: x.iter()
                .map(|a| x.iter().map(|b| (a - b).abs()).collect())
                .collect(),
        }
    }

    /// The cut τ of `[s, e)` maximising Q̂(x[s..τ], x[τ..κ]) over s < τ < κ <= e, and that Q̂.
    ///
    /// Q̂(X, Y) = 2/(n+m) Σ|Xi - Yj| - 2m/((n+m)(n-1)) Σ_{i<k}|Xi - Xk| - 2n/((n+m)(m-1))
    /// Σ_{j<l}|Yj - Yl|, a term with a zero denominator being 0. The pairs are visited in
    /// Otava's order (τ, then κ, ascending) over its matrix, whose cells with κ <= τ hold 0:
    /// the first maximum wins.
    fn best_cut(&self, s: usize, e: usize) -> (usize, f64) {
        let d = &self.d;
        let mut best = (s + 1, f64::NEG_INFINITY);
        // Σ_{s<=i<k<tau} d(i, k), grown with tau.
        let mut within_x = 0.0;
        for tau in s + 1..e {
            within_x += (s..tau - 1).map(|i| d[i][tau - 1]).sum::<f64>();
            let n = (tau - s) as f64;
            let (mut cross, mut within_y) = (0.0, 0.0);
            // The cells before the diagonal (κ <= τ) are Otava's zeros.
            for _ in s + 2..=tau {
                if 0.0 > best.1 {
                    best = (tau, 0.0);
                }
            }
            for kappa in tau + 1..=e {
                let new = kappa - 1;
                cross += (s..tau).map(|i| d[i][new]).sum::<f64>();
                within_y += (tau..new).map(|j| d[j][new]).sum::<f64>();
                let m = (kappa - tau) as f64;
                let mut q = 2.0 / (n + m) * cross;
                if n > 1.0 {
                    q -= 2.0 * m / ((n + m) * (n - 1.0)) * within_x;
                }
                if m > 1.0 {
                    q -= 2.0 * n / ((n + m) * (m - 1.0)) * within_y;
                }
                if q > best.1 {
                    best = (tau, q);
                }
            }
        }
        best
    }
}

/// Two-sided Student's t-test (equal variances) between two segments from their means and
/// population standard deviations, as Otava calls scipy's `ttest_ind_from_stats`. A pair of
/// one element each has p = 1.
pub fn t_test(left: &[f64], right: &[f64]) -> Stats {
    let (m1, s1) = mean_std(left);
    let (m2, s2) = mean_std(right);
    let (n1, n2) = (left.len() as f64, right.len() as f64);
    let pvalue = if left.len() + right.len() > 2 {
        let df = n1 + n2 - 2.0;
        let pooled = ((n1 - 1.0) * s1 * s1 + (n2 - 1.0) * s2 * s2) / df;
        let t = (m1 - m2) / (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
        if t.is_nan() {
            1.0
        } else if t.is_infinite() {
            0.0
        } else {
            let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0");
            (2.0 * dist.sf(t.abs())).min(1.0)
        }
    } else {
        1.0
    };
    Stats {
        mean_before: m1,
        mean_after: m2,
        stddev_before: s1,
        stddev_after: s2,
        pvalue,
    }
}

/// Mean and population standard deviation (0 below two elements).
fn mean_std(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if x.len() < 2 {
        return (mean, 0.0);
    }
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OTAVA: Options = Options {
        window: DEFAULT_WINDOW,
        max_pvalue: DEFAULT_MAX_PVALUE,
        min_magnitude: 0.0,
    };

    /// A seeded noise source (splitmix64 to a uniform in [-1, 1)).
    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    fn step(n: usize, at: usize, before: f64, after: f64, seed: u64) -> Vec<f64> {
        noise(seed, n)
            .into_iter()
            .enumerate()
            .map(|(i, e)| if i < at { before } else { after } + e)
            .collect()
    }

    #[test]
    fn a_step_is_found_where_it_is_with_its_means() {
        let s = step(12, 6, 100.0, 80.0, 1);
        let cps = change_points(&s, OTAVA);
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].index, 6);
        let st = cps[0].stats;
        assert!((st.mean_before - 100.0).abs() < 1.0 && (st.mean_after - 80.0).abs() < 1.0);
        assert!(
            st.forward_change() < -0.18 && st.forward_change() > -0.22,
            "{st:?}"
        );
        assert!(st.pvalue < 1e-6, "{st:?}");
    }

    #[test]
    fn a_level_that_returns_is_two_change_points() {
        let s: Vec<f64> = noise(7, 30)
            .into_iter()
            .enumerate()
            .map(|(i, e)| if (10..20).contains(&i) { 50.0 } else { 100.0 } + e)
            .collect();
        let idx: Vec<usize> = change_points(&s, OTAVA).iter().map(|c| c.index).collect();
        assert_eq!(idx, vec![10, 20]);
    }

    #[test]
    fn noise_alone_and_short_series_have_none() {
        for seed in 0..20 {
            let s: Vec<f64> = noise(seed, 40).iter().map(|e| 100.0 + e).collect();
            assert!(change_points(&s, OTAVA).is_empty(), "seed {seed}");
        }
        assert!(change_points(&[], OTAVA).is_empty());
        assert!(change_points(&[1.0], OTAVA).is_empty());
        assert!(change_points(&[1.0, 2.0], OTAVA).is_empty());
    }

    #[test]
    fn the_magnitude_threshold_drops_small_changes() {
        let s: Vec<f64> = noise(3, 20)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 10 { 100.0 } else { 101.0 } + e * 0.01)
            .collect();
        assert_eq!(change_points(&s, OTAVA).len(), 1);
        let two_percent = Options {
            min_magnitude: 0.02,
            ..OTAVA
        };
        assert!(change_points(&s, two_percent).is_empty());
    }

    #[test]
    fn t_test_matches_scipy() {
        let left = [0.5, 0.5, 1.0, 1.5, 1.5];
        let right = [1.5, 1.5, 2.0, 2.5, 2.5];
        let (m, s) = mean_std(&left);
        assert!((m - 1.0).abs() < 1e-12 && (s - 0.447_213_595_5).abs() < 1e-9);
        let st = t_test(&left, &right);
        // Population variances 0.2 pooled: t = -1 / sqrt(0.2 * 0.4) = -3.5355 with 8 degrees
        // of freedom; scipy's ttest_ind_from_stats gives the two-sided p.
        assert!((st.pvalue - 0.007_669_728).abs() < 1e-8, "{st:?}");
        assert_eq!(t_test(&[1.0], &[2.0]).pvalue, 1.0);
        assert_eq!(t_test(&[1.0, 1.0], &[1.0, 1.0]).pvalue, 1.0);
        assert_eq!(t_test(&[1.0, 1.0], &[2.0, 2.0]).pvalue, 0.0);
    }
}

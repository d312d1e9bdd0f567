//! Ground truth read from a file is checked before it is trusted: reversed rows would report
//! recall 1.0 for anything, zeroed distances or the other metric's distances 0.0.
//!
//! - Every row's distances must ascend (ties allowed), and no row may list a train id twice.
//! - The distances of stored neighbour ids are recomputed from the vectors (in f64) and must
//!   match the stored ones within the rounding of an f32 computation. Every row is checked
//!   when that costs at most [`FULL_BUDGET`] multiply-adds (small files); else evenly spaced
//!   rows, all their neighbours, up to that budget (in parallel; about 0.1 s for any size).

use super::{Dataset, GroundTruth};
use crate::Metric;
use ndarray::ArrayView2;
use rayon::prelude::*;

/// Multiply-adds spent on recomputing distances (rows x k x dimension).
pub const FULL_BUDGET: usize = 1 << 27;
/// Rows always checked when the file has them, however large it is.
const MIN_ROWS: usize = 64;

/// What was checked, for messages and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// Rows whose neighbour distances were recomputed.
    pub rows: usize,
    /// Rows in the ground truth.
    pub of: usize,
}

/// Check `ds.ground_truth` against `ds.train`/`ds.test`; what is wrong, without the file name.
pub fn verify(ds: &Dataset) -> Result<Coverage, String> {
    verify_within(ds, FULL_BUDGET)
}

/// [`verify`] spending at most `budget` multiply-adds on recomputed distances (but always
/// checking [`MIN_ROWS`] rows).
pub fn verify_within(ds: &Dataset, budget: usize) -> Result<Coverage, String> {
    let Some(gt) = &ds.ground_truth else {
        return Ok(Coverage { rows: 0, of: 0 });
    };
    let vectors = Vectors {
        train: ds.train.view(),
        test: ds.test.view(),
        metric: ds.metric,
    };
    verify_truth(&vectors, gt, budget, FIX)
}

/// The vectors ground truth is checked against.
pub struct Vectors<'a> {
    pub train: ArrayView2<'a, f32>,
    pub test: ArrayView2<'a, f32>,
    pub metric: Metric,
}

/// Check any ground truth of `v`'s test queries against its train rows (the main file's, or
/// a filter's in the sidecar): sorted rows, each id once, and, within `budget`, distances
/// that belong to the stored ids. Ids must be inside train (checked before, with the shape).
/// Messages end with `fix`, the command that repairs it.
pub fn verify_truth(
    v: &Vectors<'_>,
    gt: &GroundTruth,
    budget: usize,
    fix: &str,
) -> Result<Coverage, String> {
    let (q, k) = gt.distances.dim();
    for (i, row) in gt.distances.rows().into_iter().enumerate() {
        if let Some(j) = (1..k).find(|&j| row[j] < row[j - 1] - slack(row[j - 1])) {
            return Err(format!(
                "ground truth row {i} is not sorted nearest first: distance {} at position {j} \
                 comes after {}; {fix}",
                row[j],
                row[j - 1]
            ));
        }
    }
    let repeated = gt
        .neighbors
        .outer_iter()
        .into_par_iter()
        .enumerate()
        .find_map_first(|(i, ids)| {
            let mut seen: Vec<(i32, usize)> = ids.iter().copied().zip(0..).collect();
            seen.sort_unstable();
            seen.windows(2)
                .find(|w| w[0].0 == w[1].0)
                .map(|w| (i, w[0].0, w[0].1, w[1].1))
        });
    if let Some((i, id, a, b)) = repeated {
        return Err(format!(
            "ground truth row {i} lists train id {id} twice (positions {a} and {b}): each \
             neighbour must appear once (a repeated id pushes a true neighbour out, and recall \
             is scored against the wrong k-th distance); {fix}"
        ));
    }
    let per_row = k * v.train.ncols().max(1);
    let rows = (budget / per_row).max(MIN_ROWS).min(q);
    let sample: Vec<usize> = (0..rows).map(|r| r * q / rows.max(1)).collect();
    let bad = sample
        .par_iter()
        .find_map_first(|&i| check_row(v, gt, i, fix).err());
    match bad {
        Some(msg) => Err(msg),
        None => Ok(Coverage { rows, of: q }),
    }
}

const FIX: &str = "recompute it with `annbench datasets groundtruth FILE`";

/// Rounding allowance when comparing neighbouring stored distances.
fn slack(d: f32) -> f32 {
    1e-6 * d.abs()
}

/// Recompute row `i`'s neighbour distances and compare.
fn check_row(v: &Vectors<'_>, gt: &GroundTruth, i: usize, fix: &str) -> Result<(), String> {
    let q_owned;
    let query: &[f32] = match v.test.row(i).to_slice() {
        Some(s) => s,
        None => {
            q_owned = v.test.row(i).to_vec();
            &q_owned
        }
    };
    for (j, (&id, &stored)) in gt
        .neighbors
        .row(i)
        .iter()
        .zip(gt.distances.row(i))
        .enumerate()
    {
        let x_owned;
        let x: &[f32] = match v.train.row(id as usize).to_slice() {
            Some(s) => s,
            None => {
                x_owned = v.train.row(id as usize).to_vec();
                &x_owned
            }
        };
        let s = Sums::of(query, x);
        let metric = v.metric;
        if s.matches(metric, stored) {
            continue;
        }
        let other = match metric {
            Metric::Euclidean => Metric::Angular,
            Metric::Angular => Metric::Euclidean,
        };
        let hint = if s.matches(other, stored) {
            format!(" (they look like {other} distances, but the file says {metric})")
        } else if metric == Metric::Euclidean && s.matches(metric, stored.max(0.0).sqrt()) {
            " (they look like squared euclidean distances)".to_string()
        } else {
            String::new()
        };
        return Err(format!(
            "ground truth does not match the vectors: query {i}, neighbour {j} (train id {id}) \
             is stored at distance {stored} but its {metric} distance is {:.6}{hint}; {fix}",
            s.distance(metric)
        ));
    }
    Ok(())
}

/// The f64 sums one pass over a (query, train row) pair gives: q.x, |q|^2, |x|^2, |q-x|^2.
struct Sums {
    dot: f64,
    qq: f64,
    xx: f64,
    sq: f64,
}

impl Sums {
    /// In 8 independent lanes, so the compiler vectorises the f64 accumulation.
    fn of(q: &[f32], x: &[f32]) -> Sums {
        const L: usize = 8;
        let mut acc = [[0f64; L]; 4];
        let (qc, xc) = (q.chunks_exact(L), x.chunks_exact(L));
        let tail = qc.remainder().iter().zip(xc.remainder());
        for (a, b) in qc.zip(xc) {
            for l in 0..L {
                let (a, b) = (f64::from(a[l]), f64::from(b[l]));
                acc[0][l] += a * b;
                acc[1][l] += a * a;
                acc[2][l] += b * b;
                acc[3][l] += (a - b) * (a - b);
            }
        }
        for (&a, &b) in tail {
            let (a, b) = (f64::from(a), f64::from(b));
            acc[0][0] += a * b;
            acc[1][0] += a * a;
            acc[2][0] += b * b;
            acc[3][0] += (a - b) * (a - b);
        }
        let [dot, qq, xx, sq] = acc.map(|lanes| lanes.iter().sum());
        Sums { dot, qq, xx, sq }
    }

    /// Exact distance.
    fn distance(&self, metric: Metric) -> f64 {
        match metric {
            Metric::Euclidean => self.sq.sqrt(),
            Metric::Angular if self.qq == 0.0 || self.xx == 0.0 => 1.0,
            Metric::Angular => 1.0 - self.dot / (self.qq.sqrt() * self.xx.sqrt()),
        }
    }

    /// Whether a stored distance agrees with the exact one, allowing the error of a float32
    /// computation (ann-benchmarks computes euclidean ground truth as |q|^2 - 2 q.x + |x|^2 in
    /// float32, which loses precision to the norms, so squares are compared against them).
    fn matches(&self, metric: Metric, stored: f32) -> bool {
        let s = f64::from(stored);
        if !s.is_finite() {
            return false;
        }
        match metric {
            Metric::Euclidean => {
                (s * s - self.sq).abs() <= 1e-4 * (self.qq + self.xx) + 1e-6 * self.sq + 1e-12
            }
            Metric::Angular => (s - self.distance(metric)).abs() <= 2e-3,
        }
    }
}

#[cfg(test)]
#[path = "gtcheck_tests.rs"]
mod tests;

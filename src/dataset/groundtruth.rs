//! Exact k-nearest-neighbour ground truth, multi-threaded (rayon over query blocks) and
//! vectorised (one matrixmultiply SGEMM per query block x train block).
//!
//! The GEMM gives f32 *ranking scores* (`|x|^2 - 2 q.x` for euclidean, `-q.x / |x|` for
//! angular). Rounding could misorder near-equal candidates, so each query keeps `k + extra`
//! candidates, re-ranks them with distances recomputed in f64, and then proves the result: every
//! discarded train row had an approximate score >= the worst kept one, and a rigorous bound on
//! the GEMM rounding error says none of them can beat the exact k-th distance. A query that
//! fails the proof is recomputed by a full f64 scan. Stored distances are the f64 ones rounded
//! to f32, never the GEMM approximations.

use super::GroundTruth;
use crate::{Error, Metric, Result};
use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Queries per GEMM block (one rayon task).
const QUERY_BLOCK: usize = 128;
/// Train rows per GEMM block.
const TRAIN_BLOCK: usize = 2048;

/// Exact ground truth of `test` against `train`: ids and distances of the `min(k, n)` nearest
/// train rows per query, nearest first (ties by lower id).
///
/// The caller guarantees equal dimensions (as a validated [`super::Dataset`] has); use
/// [`try_compute`] for unchecked input such as user arrays.
pub fn compute(
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    metric: Metric,
    k: usize,
) -> GroundTruth {
    compute_with_stats(train, test, metric, k).0
}

/// [`compute`] with checks on shapes and `k`, for input that was not validated.
pub fn try_compute(
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    metric: Metric,
    k: usize,
) -> Result<GroundTruth> {
    check_input(train, test, k)?;
    Ok(compute(train, test, metric, k))
}

/// The checks of [`try_compute`]: equal dimensions, `k >= 1`, a non-empty train set that
/// int32 ids can address, finite values whose squared distances fit float32 (see
/// [`super::validate::MAX_SQUARED_LENGTH`]).
pub fn check_input(train: ArrayView2<f32>, test: ArrayView2<f32>, k: usize) -> Result<()> {
    if train.ncols() != test.ncols() {
        return Err(Error::Dataset(format!(
            "dimension mismatch: train has {} columns but test has {}",
            train.ncols(),
            test.ncols()
        )));
    }
    if k == 0 || train.nrows() == 0 {
        return Err(Error::Config(format!(
            "ground truth needs k >= 1 and a non-empty train set (k = {k}, train rows = {})",
            train.nrows()
        )));
    }
    if train.nrows() > i32::MAX as usize {
        return Err(Error::Dataset(
            "train has more rows than int32 ids can address".into(),
        ));
    }
    // The ranking runs in float32: a squared distance past its range would rank nothing.
    super::validate::check_vectors("train", train).map_err(Error::Dataset)?;
    super::validate::check_vectors("test", test).map_err(Error::Dataset)?;
    Ok(())
}

/// Counters describing how a computation went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Queries whose GEMM candidates could not be proven complete and were rescanned exactly.
    pub fallbacks: usize,
}

/// [`compute`], also returning [`Stats`].
pub fn compute_with_stats(
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    metric: Metric,
    k: usize,
) -> (GroundTruth, Stats) {
    compute_observed(train, test, metric, k, &|_| true)
        .unwrap_or_else(|| unreachable!("an observer that never stops"))
}

/// Work units of a computation: query x train row pairs, as [`compute_observed`] reports them.
pub fn work_units(train_rows: usize, test_rows: usize) -> u64 {
    train_rows as u64 * test_rows as u64
}

/// [`compute_with_stats`] that calls `observe(pairs)` from the worker threads as each block of
/// query x train-row pairs is done (they add up to [`work_units`]), for a progress bar. When
/// `observe` returns false the computation stops early and the result is `None`.
pub fn compute_observed(
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    metric: Metric,
    k: usize,
    observe: &(dyn Fn(u64) -> bool + Sync),
) -> Option<(GroundTruth, Stats)> {
    assert_eq!(
        train.ncols(),
        test.ncols(),
        "train and test dimensions differ"
    );
    let n = train.nrows();
    let q = test.nrows();
    let k = k.min(n);
    let keep = (k + (k / 2).max(16)).min(n);
    let norms: Vec<f64> = train
        .rows()
        .into_iter()
        .map(|r| norm_sq(r).sqrt())
        .collect();
    let max_norm = norms.iter().copied().fold(0.0, f64::max);
    // Per-row term of the ranking score: |x|^2 (euclidean) or 1/|x| (angular; 0 for x = 0).
    let row_term: Vec<f32> = norms
        .iter()
        .map(|&nx| match metric {
            Metric::Euclidean => (nx * nx) as f32,
            Metric::Angular if nx > 0.0 => (1.0 / nx) as f32,
            Metric::Angular => 0.0,
        })
        .collect();
    let ctx = Ctx {
        train,
        metric,
        k,
        keep,
        row_term,
        max_norm,
        observe,
        stopped: AtomicBool::new(false),
    };
    let mut neighbors = Array2::<i32>::zeros((q, k));
    let mut distances = Array2::<f32>::zeros((q, k));
    let fallbacks = AtomicUsize::new(0);
    neighbors
        .axis_chunks_iter_mut(Axis(0), QUERY_BLOCK)
        .into_par_iter()
        .zip(distances.axis_chunks_iter_mut(Axis(0), QUERY_BLOCK))
        .enumerate()
        .for_each(|(b, (mut ids, mut dists))| {
            let start = b * QUERY_BLOCK;
            let block = test.slice(ndarray::s![start..start + ids.nrows(), ..]);
            let results = ctx.block(block);
            for (i, (best, fell_back)) in results.into_iter().enumerate() {
                if fell_back {
                    fallbacks.fetch_add(1, Ordering::Relaxed);
                }
                for (j, (key, id)) in best.into_iter().enumerate() {
                    ids[[i, j]] = id as i32;
                    dists[[i, j]] = key_to_distance(metric, key);
                }
            }
        });
    if ctx.stopped.load(Ordering::Relaxed) {
        return None;
    }
    let stats = Stats {
        fallbacks: fallbacks.into_inner(),
    };
    Some((
        GroundTruth {
            neighbors,
            distances,
        },
        stats,
    ))
}

struct Ctx<'a> {
    train: ArrayView2<'a, f32>,
    metric: Metric,
    k: usize,
    keep: usize,
    row_term: Vec<f32>,
    max_norm: f64,
    observe: &'a (dyn Fn(u64) -> bool + Sync),
    stopped: AtomicBool,
}

/// Candidate list of one query: approximate scores, pruned to `keep` when it reaches `2 * keep`.
struct Candidates {
    items: Vec<(f32, u32)>,
    threshold: f32,
    pruned: bool,
}

impl Candidates {
    fn prune(&mut self, keep: usize) {
        if self.items.len() > keep {
            self.items
                .select_nth_unstable_by(keep - 1, |a, b| a.0.total_cmp(&b.0));
            self.items.truncate(keep);
            self.threshold = self.items[keep - 1].0;
            self.pruned = true;
        }
    }
}

impl Ctx<'_> {
    /// Exact top-k of each query in `block` as (f64 key, id), and whether it needed a rescan.
    fn block(&self, block: ArrayView2<f32>) -> Vec<(Vec<(f64, u32)>, bool)> {
        let (qb, d, n) = (block.nrows(), block.ncols(), self.train.nrows());
        let mut cands: Vec<Candidates> = (0..qb)
            .map(|_| Candidates {
                items: Vec::with_capacity(2 * self.keep),
                threshold: f32::INFINITY,
                pruned: false,
            })
            .collect();
        let mut c = vec![0f32; qb * TRAIN_BLOCK];
        let alpha = match self.metric {
            Metric::Euclidean => -2.0,
            Metric::Angular => -1.0,
        };
        let (ts0, ts1) = (self.train.strides()[0], self.train.strides()[1]);
        let (qs0, qs1) = (block.strides()[0], block.strides()[1]);
        for t0 in (0..n).step_by(TRAIN_BLOCK) {
            if self.stopped.load(Ordering::Relaxed) {
                return Vec::new();
            }
            let tb = TRAIN_BLOCK.min(n - t0);
            let b = self.train.slice(ndarray::s![t0..t0 + tb, ..]);
            // SAFETY: pointers and strides describe the live views `block` (qb x d) and `b`
            // (tb x d, read transposed as d x tb); `c` holds qb x tb with row stride tb.
            unsafe {
                matrixmultiply::sgemm(
                    qb,
                    d,
                    tb,
                    alpha,
                    block.as_ptr(),
                    qs0,
                    qs1,
                    b.as_ptr(),
                    ts1,
                    ts0,
                    0.0,
                    c.as_mut_ptr(),
                    tb as isize,
                    1,
                );
            }
            let terms = &self.row_term[t0..t0 + tb];
            for (i, cand) in cands.iter_mut().enumerate() {
                let row = &c[i * tb..(i + 1) * tb];
                for (j, (&g, &t)) in row.iter().zip(terms).enumerate() {
                    let s = match self.metric {
                        Metric::Euclidean => g + t,
                        Metric::Angular => g * t,
                    };
                    if s < cand.threshold {
                        cand.items.push((s, (t0 + j) as u32));
                        if cand.items.len() == 2 * self.keep {
                            cand.prune(self.keep);
                        }
                    }
                }
            }
            if !(self.observe)((qb * tb) as u64) {
                self.stopped.store(true, Ordering::Relaxed);
            }
        }
        cands
            .into_iter()
            .enumerate()
            .map(|(i, mut cand)| {
                cand.prune(self.keep);
                self.finish(block.row(i), cand)
            })
            .collect()
    }

    /// Re-ranks candidates exactly and proves nothing better was discarded (else rescans).
    fn finish(&self, query: ArrayView1<f32>, cand: Candidates) -> (Vec<(f64, u32)>, bool) {
        if self.k == 0 {
            return (Vec::new(), false);
        }
        let q: Vec<f32> = query.iter().copied().collect();
        let mut exact: Vec<(f64, u32)> = cand
            .items
            .iter()
            .map(|&(_, id)| (self.key(&q, id as usize), id))
            .collect();
        sort_keys(&mut exact);
        exact.truncate(self.k);
        // Fewer than k candidates means scores that compared as nothing (NaN, an overflow):
        // the exact scan below decides, never rows of zeros.
        let complete = exact.len() == self.k;
        if complete && (!cand.pruned || self.proven(&q, cand.threshold, exact[self.k - 1].0)) {
            return (exact, false);
        }
        let mut all: Vec<(f64, u32)> = (0..self.train.nrows())
            .map(|id| (self.key(&q, id), id as u32))
            .collect();
        if all.len() > self.k {
            all.select_nth_unstable_by(self.k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            all.truncate(self.k);
        }
        sort_keys(&mut all);
        (all, true)
    }

    /// True when no discarded row (approximate score >= `threshold`) can have an exact key
    /// below `kth_key`: the exact score is within `tol` of the approximate one.
    fn proven(&self, q: &[f32], threshold: f32, kth_key: f64) -> bool {
        let u = f64::from(f32::EPSILON) / 2.0;
        let d = q.len() as f64;
        let qn = norm_sq(ArrayView1::from(q)).sqrt();
        let m = self.max_norm;
        // The bound below is relative; products below float32's normal range (vectors of a
        // tiny scale, e.g. x 1e-22) also round absolutely, by up to 1.4e-45 each. Far above
        // that, the bound holds; else the exact scan decides.
        if qn * m < d * 1e-30 {
            return false;
        }
        // Dot-product rounding |fl(q.x) - q.x| <= (d + 1) u |q||x| in any summation order,
        // plus the roundings of the per-row term and of the final add/multiply.
        let (tol, exact_score) = match self.metric {
            Metric::Euclidean => {
                let tol = 2.0 * (d + 2.0) * u * qn * m
                    + 2.0 * u * m * m
                    + 2.0 * u * (m * m + 2.0 * qn * m);
                (tol, kth_key - qn * qn)
            }
            Metric::Angular => ((d + 4.0) * u * qn * 1.01, (kth_key - 1.0) * qn),
        };
        f64::from(threshold) - tol * 1.01 >= exact_score
    }

    /// Exact f64 key: squared L2 distance, or cosine distance.
    fn key(&self, q: &[f32], id: usize) -> f64 {
        let x = self.train.row(id);
        match self.metric {
            Metric::Euclidean => q
                .iter()
                .zip(x.iter())
                .map(|(&a, &b)| {
                    let t = f64::from(a) - f64::from(b);
                    t * t
                })
                .sum(),
            Metric::Angular => {
                let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
                for (&a, &b) in q.iter().zip(x.iter()) {
                    let (a, b) = (f64::from(a), f64::from(b));
                    dot += a * b;
                    na += a * a;
                    nb += b * b;
                }
                if na == 0.0 || nb == 0.0 {
                    1.0
                } else {
                    1.0 - dot / (na.sqrt() * nb.sqrt())
                }
            }
        }
    }
}

fn sort_keys(v: &mut [(f64, u32)]) {
    v.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
}

fn norm_sq(r: ArrayView1<f32>) -> f64 {
    r.iter().map(|&v| f64::from(v) * f64::from(v)).sum()
}

fn key_to_distance(metric: Metric, key: f64) -> f32 {
    match metric {
        Metric::Euclidean => key.sqrt() as f32,
        Metric::Angular => key as f32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Scores that overflow float32 rank nothing: the exact f64 scan answers, never rows of
    /// id 0 at distance 0 (unchecked input; checked input refuses such values first).
    #[test]
    fn scores_that_overflow_float32_fall_back_to_the_exact_scan() {
        let train = array![[1e20f32, 0.0], [3e19, 0.0], [-2e20, 0.0]];
        let test = array![[2.9e19f32, 0.0]];
        let gt = compute(train.view(), test.view(), Metric::Euclidean, 2);
        assert_eq!(gt.neighbors.row(0).to_vec(), [1, 0]);
        assert!(
            (gt.distances[[0, 0]] - 1e18).abs() < 1e13,
            "{:?}",
            gt.distances
        );
        let e = try_compute(train.view(), test.view(), Metric::Euclidean, 2).unwrap_err();
        assert!(e.to_string().contains("'train' row 0"), "{e}");
    }

    /// Vectors of a tiny scale, whose products fall below float32's normal range: the same
    /// neighbours as an exact f64 scan.
    #[test]
    fn vectors_of_a_tiny_scale_get_exact_neighbours() {
        let mut rng = crate::dataset::rng::Rng::new(3);
        for scale in [1e-20f32, 1e-23, 1e-30] {
            let mut m =
                |rows| Array2::from_shape_simple_fn((rows, 16), || rng.normal() as f32 * scale);
            let (train, test) = (m(3000), m(20));
            let gt = compute(train.view(), test.view(), Metric::Euclidean, 10);
            for (i, q) in test.rows().into_iter().enumerate() {
                let mut all: Vec<(f64, usize)> = train
                    .rows()
                    .into_iter()
                    .enumerate()
                    .map(|(j, x)| {
                        let d: f64 = q
                            .iter()
                            .zip(x)
                            .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
                            .sum();
                        (d, j)
                    })
                    .collect();
                all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let want: Vec<i32> = all.iter().take(10).map(|&(_, j)| j as i32).collect();
                assert_eq!(
                    gt.neighbors.row(i).to_vec(),
                    want,
                    "scale {scale}, query {i}"
                );
            }
        }
    }
}

//! Exact k-nearest-neighbour ground truth, multi-threaded (rayon over query blocks) and
//! vectorised (one f32 matrix product per query block x train block, by the `gemm` crate's
//! kernel; see [`scores`]).
//!
//! The product gives f32 *ranking scores* (`|x|^2 - 2 q.x` for euclidean, `-q.x / |x|` for
//! angular). Rounding could misorder near-equal candidates, so each query keeps `k + extra`
//! candidates ([`candidates`]), re-ranks the nearest of them with distances recomputed in f64
//! ([`exact`]), and then proves the result: every train row not re-ranked has an approximate
//! score >= some bound, and a rigorous bound on the f32 rounding error says none of them can
//! reach the exact k-th distance; while the proof fails, more candidates are re-ranked. A query
//! whose candidates cannot prove it is recomputed by a full f64 scan. Stored distances are the
//! f64 ones rounded to f32, never the f32 approximations, so the result is the exact top k (by
//! f64 key, ties by lower id) whatever the kernel's rounding.

use super::GroundTruth;
use crate::{Error, Metric, Result};
use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

mod candidates;
mod exact;
mod scores;

use candidates::Candidates;
use exact::Query;

/// Most queries per block (one rayon task): a block re-reads the whole train set, so larger
/// blocks mean fewer passes over it.
const QUERY_BLOCK: usize = 1024;
/// Fewest queries per block, unless the candidate lists' memory says otherwise.
const MIN_QUERY_BLOCK: usize = 16;
/// Train rows per GEMM block: the block's scores (queries x rows) stay near the cache.
const TRAIN_BLOCK: usize = 1024;
/// Memory for one block's candidate lists, which bounds the block for large k.
const CANDIDATE_BYTES: usize = 64 << 20;

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
    // Exact keys read train rows as slices: a view of another layout is copied once.
    let train = train.as_standard_layout();
    let train_norm_sq: Vec<f64> = train
        .rows()
        .into_iter()
        .map(|r| exact::norm_sq(r.iter().copied()))
        .collect();
    let max_norm = train_norm_sq.iter().map(|s| s.sqrt()).fold(0.0, f64::max);
    // Per-row term of the ranking score: |x|^2 (euclidean) or 1/|x| (angular; 0 for x = 0).
    let row_term: Vec<f32> = train_norm_sq
        .iter()
        .map(|&s| match metric {
            Metric::Euclidean => s as f32,
            Metric::Angular if s > 0.0 => (1.0 / s.sqrt()) as f32,
            Metric::Angular => 0.0,
        })
        .collect();
    let terms_finite = row_term.iter().all(|t| t.is_finite());
    let ctx = Ctx {
        terms_finite,
        train: train.view(),
        train_flat: train.as_slice().unwrap_or_default(),
        train_norm_sq: &train_norm_sq,
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
    let qb = query_block(q, keep);
    neighbors
        .axis_chunks_iter_mut(Axis(0), qb)
        .into_par_iter()
        .zip(distances.axis_chunks_iter_mut(Axis(0), qb))
        .enumerate()
        .for_each(|(b, (mut ids, mut dists))| {
            let start = b * qb;
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

/// Queries per block: up to [`QUERY_BLOCK`], but at least 4 blocks per thread when there are
/// few queries (so all threads have work), and candidate lists within [`CANDIDATE_BYTES`].
fn query_block(queries: usize, keep: usize) -> usize {
    let spread = queries.div_ceil(4 * rayon::current_num_threads());
    let memory = CANDIDATE_BYTES / (2 * keep.max(1) * std::mem::size_of::<(f32, u32)>());
    spread
        .clamp(MIN_QUERY_BLOCK, QUERY_BLOCK)
        .min(memory)
        .max(1)
}

struct Ctx<'a> {
    train: ArrayView2<'a, f32>,
    /// `train` as one row-major slice (it has the standard layout).
    train_flat: &'a [f32],
    /// Per-row sum of squares in f64.
    train_norm_sq: &'a [f64],
    metric: Metric,
    k: usize,
    keep: usize,
    row_term: Vec<f32>,
    /// False when a row's term overflowed f32 (1/|x| of a tiny row): its scores may be NaN,
    /// which no threshold bounds, so only an exact scan can decide.
    terms_finite: bool,
    max_norm: f64,
    observe: &'a (dyn Fn(u64) -> bool + Sync),
    stopped: AtomicBool,
}

impl Ctx<'_> {
    /// Exact top-k of each query in `block` as (f64 key, id), and whether it needed a rescan.
    fn block(&self, block: ArrayView2<f32>) -> Vec<(Vec<(f64, u32)>, bool)> {
        let (qb, n) = (block.nrows(), self.train.nrows());
        let mut cands: Vec<Candidates> = (0..qb).map(|_| Candidates::new(self.keep)).collect();
        let mut c = vec![0f32; qb * TRAIN_BLOCK.min(n)];
        let (alpha, product) = match self.metric {
            Metric::Euclidean => (-2.0, false),
            Metric::Angular => (-1.0, true),
        };
        for t0 in (0..n).step_by(TRAIN_BLOCK) {
            if self.stopped.load(Ordering::Relaxed) {
                return Vec::new();
            }
            let tb = TRAIN_BLOCK.min(n - t0);
            let b = self.train.slice(ndarray::s![t0..t0 + tb, ..]);
            scores::product(block, b, alpha, &mut c);
            let terms = &self.row_term[t0..t0 + tb];
            for (cand, row) in cands.iter_mut().zip(c.chunks_exact(tb)) {
                cand.offer(row, terms, t0, product);
            }
            if !(self.observe)((qb * tb) as u64) {
                self.stopped.store(true, Ordering::Relaxed);
            }
        }
        cands
            .into_iter()
            .zip(block.rows())
            .map(|(cand, query)| self.finish(query, cand))
            .collect()
    }

    /// Re-ranks candidates exactly, nearest approximate scores first, until the rounding
    /// bound proves that no row left out can be among the k nearest (else rescans exactly).
    fn finish(&self, query: ArrayView1<f32>, mut cand: Candidates) -> (Vec<(f64, u32)>, bool) {
        if self.k == 0 {
            return (Vec::new(), false);
        }
        cand.finish();
        let query = Query::new(
            query.iter().copied().collect(),
            self.train_flat,
            self.train_norm_sq,
            self.metric,
        );
        let all_rows = cand.holds_every_row();
        let items = &cand.items;
        // Most queries are proven with a few rows past k; each miss doubles the margin.
        let mut margin = (self.k / 16).max(4);
        let mut exact: Vec<(f64, u32)> = Vec::with_capacity(items.len());
        let mut keyed = 0;
        loop {
            let upto = (self.k + margin).min(items.len());
            query.keys(items[keyed..upto].iter().map(|&(_, id)| id), &mut exact);
            keyed = upto;
            // Fewer than k candidates means scores that compared as nothing (NaN, an
            // overflow): the exact scan below decides, never rows of zeros.
            if exact.len() < self.k {
                break;
            }
            let mut best = exact.clone();
            best.select_nth_unstable_by(self.k - 1, exact::cmp_keys);
            best.truncate(self.k);
            best.sort_unstable_by(exact::cmp_keys);
            // Every row not keyed has an approximate score >= the first unkeyed candidate's
            // (the list is sorted) or >= the list's threshold (rows left out of it).
            let rest = match items.get(keyed) {
                Some(&(s, _)) => Some(s),
                None if all_rows => None,
                None => Some(cand.threshold),
            };
            let proven = match rest {
                None => true,
                Some(s) => self.terms_finite && query.proven(s, best[self.k - 1].0, self.max_norm),
            };
            if proven {
                return (best, false);
            }
            if keyed == items.len() {
                break;
            }
            margin *= 2;
        }
        (query.scan(self.k), true)
    }
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

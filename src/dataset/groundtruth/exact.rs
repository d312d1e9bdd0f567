//! Exact float64 keys of (query, train row) pairs, and the rounding bound that proves a
//! candidate list complete.
//!
//! Keys are summed dimension by dimension in index order, always: results do not depend on
//! how many rows are keyed at once. Several rows are keyed together so that their independent
//! sums overlap in the CPU (one sum alone waits on each add's latency) and their rows stream
//! from memory side by side.

use crate::Metric;

/// Rows keyed together.
const LANES: usize = 8;

/// One query against the train set.
pub(super) struct Query<'a> {
    q: Vec<f32>,
    /// Sum of q_i^2 in f64, in index order.
    norm_sq: f64,
    /// The train rows, row-major, `q.len()` values each.
    train: &'a [f32],
    rows: usize,
    /// Per-row sum of x_i^2 in f64, in index order (the angular key's |x|^2).
    train_norm_sq: &'a [f64],
    metric: Metric,
}

impl<'a> Query<'a> {
    /// `q` against the row-major `train` (`q.len()` values a row), whose rows have the
    /// squared norms `train_norm_sq` (one per row).
    pub fn new(q: Vec<f32>, train: &'a [f32], train_norm_sq: &'a [f64], metric: Metric) -> Self {
        let norm_sq = norm_sq(q.iter().copied());
        Query {
            q,
            norm_sq,
            train,
            rows: train_norm_sq.len(),
            train_norm_sq,
            metric,
        }
    }

    /// Appends (key, id) for every id of `ids`: squared L2 distance, or cosine distance.
    pub fn keys(&self, ids: impl ExactSizeIterator<Item = u32>, out: &mut Vec<(f64, u32)>) {
        out.reserve(ids.len());
        let mut batch = [0u32; LANES];
        let mut len = 0;
        for id in ids {
            batch[len] = id;
            len += 1;
            if len == LANES {
                self.key_batch(&batch, out);
                len = 0;
            }
        }
        for &id in &batch[..len] {
            self.key_batch(&[id], out);
        }
    }

    fn key_batch<const L: usize>(&self, ids: &[u32; L], out: &mut Vec<(f64, u32)>) {
        let rows: [&[f32]; L] = std::array::from_fn(|l| self.row(ids[l]));
        let mut acc = [0f64; L];
        match self.metric {
            Metric::Euclidean => {
                for (i, &a) in self.q.iter().enumerate() {
                    let a = f64::from(a);
                    for l in 0..L {
                        let t = a - f64::from(rows[l][i]);
                        acc[l] += t * t;
                    }
                }
                out.extend(acc.iter().zip(ids).map(|(&key, &id)| (key, id)));
            }
            Metric::Angular => {
                for (i, &a) in self.q.iter().enumerate() {
                    let a = f64::from(a);
                    for l in 0..L {
                        acc[l] += a * f64::from(rows[l][i]);
                    }
                }
                for (&dot, &id) in acc.iter().zip(ids) {
                    let nb = self.train_norm_sq[id as usize];
                    let key = if self.norm_sq == 0.0 || nb == 0.0 {
                        1.0
                    } else {
                        1.0 - dot / (self.norm_sq.sqrt() * nb.sqrt())
                    };
                    out.push((key, id));
                }
            }
        }
    }

    fn row(&self, id: u32) -> &'a [f32] {
        let d = self.q.len();
        &self.train[id as usize * d..(id as usize + 1) * d]
    }

    /// The k lowest (key, id) over every train row, by key then id: the exact scan.
    pub fn scan(&self, k: usize) -> Vec<(f64, u32)> {
        let mut all = Vec::with_capacity(self.rows);
        self.keys(0..self.rows as u32, &mut all);
        if all.len() > k {
            all.select_nth_unstable_by(k - 1, cmp_keys);
            all.truncate(k);
        }
        all.sort_unstable_by(cmp_keys);
        all
    }

    /// True when no row whose approximate score is >= `threshold` can have an exact key of
    /// `kth_key` or below: the exact score is within a rigorous rounding bound of the
    /// approximate one. `max_norm` is the largest train row norm.
    pub fn proven(&self, threshold: f32, kth_key: f64, max_norm: f64) -> bool {
        let u = f64::from(f32::EPSILON) / 2.0;
        let d = self.q.len() as f64;
        let qn = self.norm_sq.sqrt();
        let m = max_norm;
        // The bound below is relative; products below float32's normal range (vectors of a
        // tiny scale, e.g. x 1e-22) also round absolutely, by up to 1.4e-45 each. Far above
        // that, the bound holds; else the exact scan decides.
        if qn * m < d * 1e-30 {
            return false;
        }
        // Nor where an f32 intermediate could overflow (unchecked input): partial dot products
        // stay within |q||x|, a score within the bound below.
        let largest = match self.metric {
            Metric::Euclidean => m * m + 2.0 * qn * m,
            Metric::Angular => qn * m,
        };
        if largest.is_nan() || largest >= 0.9 * f64::from(f32::MAX) {
            return false;
        }
        // Dot-product rounding |fl(q.x) - q.x| <= (d + 1) u |q||x| in any summation order
        // (with or without fused multiply-adds), plus the roundings of the per-row term and
        // of the final add/multiply.
        let (tol, exact_score) = match self.metric {
            Metric::Euclidean => {
                let tol = 2.0 * (d + 2.0) * u * qn * m
                    + 2.0 * u * m * m
                    + 2.0 * u * (m * m + 2.0 * qn * m);
                (tol, kth_key - qn * qn)
            }
            Metric::Angular => ((d + 4.0) * u * qn * 1.01, (kth_key - 1.0) * qn),
        };
        // Strict: a left-out row at exactly the k-th key could win the tie on a lower id.
        f64::from(threshold) - tol * 1.01 > exact_score
    }
}

/// Order of results: key, then id.
pub(super) fn cmp_keys(a: &(f64, u32), b: &(f64, u32)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Sum of squares in f64, in index order.
pub(super) fn norm_sq(r: impl Iterator<Item = f32>) -> f64 {
    r.map(|v| f64::from(v) * f64::from(v)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// Batched keys are bit for bit the one-row-at-a-time sums, for batch remainders too.
    #[test]
    fn batched_keys_equal_single_row_sums() {
        let mut rng = crate::dataset::rng::Rng::new(9);
        let train = Array2::from_shape_simple_fn((29, 13), || rng.normal() as f32 * 3.0);
        let norms: Vec<f64> = train
            .rows()
            .into_iter()
            .map(|r| norm_sq(r.iter().copied()))
            .collect();
        let q: Vec<f32> = (0..13).map(|_| rng.normal() as f32).collect();
        for metric in [Metric::Euclidean, Metric::Angular] {
            let flat = train.as_slice().unwrap();
            let query = Query::new(q.clone(), flat, &norms, metric);
            let mut got = Vec::new();
            query.keys(0..29, &mut got);
            for (id, &(key, got_id)) in got.iter().enumerate() {
                let x = train.row(id);
                let (mut l2, mut dot, mut nq) = (0f64, 0f64, 0f64);
                for (&a, &b) in q.iter().zip(x) {
                    let (a, b) = (f64::from(a), f64::from(b));
                    l2 += (a - b) * (a - b);
                    dot += a * b;
                    nq += a * a;
                }
                let want = match metric {
                    Metric::Euclidean => l2,
                    Metric::Angular => 1.0 - dot / (nq.sqrt() * norms[id].sqrt()),
                };
                assert_eq!((key.to_bits(), got_id), (want.to_bits(), id as u32));
            }
        }
    }
}

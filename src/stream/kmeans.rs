//! Seeded k-means for the clustered runbooks: k-means++ seeding and 10 Lloyd rounds on a
//! sample of up to 100,000 train rows, then every row to its nearest centroid. Distances by
//! the dataset's metric (cosine for angular sets: means of unit vectors); the nearest
//! centroids come from the exact ground truth with k = 1 ([`crate::dataset::groundtruth`]).

use crate::dataset::rng::Rng;
use crate::dataset::{Dataset, groundtruth};
use crate::{Metric, Result};
use ndarray::{Array2, ArrayView2, Axis};

/// The cluster of every train row: seeded k-means++ and 10 Lloyd rounds on a sample of up to
/// 100,000 rows, then every row to its nearest centroid (exact, by the dataset's metric).
pub fn labels(ds: &Dataset, clusters: usize, seed: u64) -> Result<Vec<usize>> {
    let n = ds.train.nrows();
    let mut rng = Rng::new(seed);
    let mut idx: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut idx);
    idx.truncate(100_000.min(n));
    idx.sort_unstable();
    let sample = ds.train.select(Axis(0), &idx);
    let metric = ds.metric;
    let mut centroids = plus_plus(&sample, clusters, metric, &mut rng);
    for _ in 0..10 {
        let labels = nearest(centroids.view(), sample.view(), metric)?;
        centroids = means(&sample, &labels, clusters, metric, &mut rng);
    }
    nearest(centroids.view(), ds.train.view(), metric)
}

/// The index of the nearest centroid of each row (exact ground truth with k = 1).
fn nearest(
    centroids: ArrayView2<f32>,
    rows: ArrayView2<f32>,
    metric: Metric,
) -> Result<Vec<usize>> {
    let gt = groundtruth::try_compute(centroids, rows, metric, 1)?;
    Ok(gt.neighbors.column(0).iter().map(|&c| c as usize).collect())
}

/// Squared L2 distance, on unit vectors for angular sets (cosine ranking).
fn dist2(metric: Metric, a: ndarray::ArrayView1<f32>, b: ndarray::ArrayView1<f32>) -> f64 {
    let (na, nb) = match metric {
        Metric::Euclidean => (1.0, 1.0),
        Metric::Angular => (norm(a), norm(b)),
    };
    a.iter()
        .zip(b.iter())
        .map(|(&x, &y)| {
            let t = f64::from(x) / na - f64::from(y) / nb;
            t * t
        })
        .sum()
}

fn norm(a: ndarray::ArrayView1<f32>) -> f64 {
    let s: f64 = a.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
    if s > 0.0 { s.sqrt() } else { 1.0 }
}

/// k-means++ seeding: each next centre drawn with probability proportional to the squared
/// distance to the nearest centre so far.
fn plus_plus(sample: &Array2<f32>, clusters: usize, metric: Metric, rng: &mut Rng) -> Array2<f32> {
    let s = sample.nrows();
    let mut centres = vec![rng.below(s)];
    let mut best: Vec<f64> = (0..s)
        .map(|i| dist2(metric, sample.row(i), sample.row(centres[0])))
        .collect();
    while centres.len() < clusters.min(s) {
        let total: f64 = best.iter().sum();
        let pick = if total > 0.0 {
            let mut x = rng.uniform() * total;
            best.iter()
                .position(|&d| {
                    x -= d;
                    x < 0.0
                })
                .unwrap_or(s - 1)
        } else {
            rng.below(s)
        };
        centres.push(pick);
        for (i, b) in best.iter_mut().enumerate() {
            *b = b.min(dist2(metric, sample.row(i), sample.row(pick)));
        }
    }
    sample.select(Axis(0), &centres)
}

/// The mean of each cluster's rows (of unit vectors for angular sets); an empty cluster takes
/// a random row.
fn means(
    sample: &Array2<f32>,
    labels: &[usize],
    clusters: usize,
    metric: Metric,
    rng: &mut Rng,
) -> Array2<f32> {
    let d = sample.ncols();
    let mut sum = Array2::<f64>::zeros((clusters, d));
    let mut count = vec![0usize; clusters];
    for (i, &l) in labels.iter().enumerate() {
        let r = sample.row(i);
        let scale = match metric {
            Metric::Euclidean => 1.0,
            Metric::Angular => norm(r),
        };
        for (s, &x) in sum.row_mut(l).iter_mut().zip(r.iter()) {
            *s += f64::from(x) / scale;
        }
        count[l] += 1;
    }
    let mut out = Array2::<f32>::zeros((clusters, d));
    for (c, &members) in count.iter().enumerate() {
        if members == 0 {
            out.row_mut(c)
                .assign(&sample.row(rng.below(sample.nrows())));
        } else {
            for (o, &s) in out.row_mut(c).iter_mut().zip(sum.row(c).iter()) {
                *o = (s / members as f64) as f32;
            }
        }
    }
    out
}

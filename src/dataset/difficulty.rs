//! How hard each query is for a nearest-neighbour index, with the measures of Aumüller &
//! Ceccarello ("The role of local dimensionality measures in benchmarking nearest neighbor
//! search", Information Systems 2021):
//!
//! - **LID**, local intrinsic dimensionality, the maximum-likelihood estimate of Amsaleg et
//!   al. from the query's `k = 100` nearest distances: `-(mean_i ln(r_i / r_k))^-1`. Higher is
//!   harder: the neighbourhood looks like a higher-dimensional space, so distances concentrate.
//! - **RC**, relative contrast (He et al.): the query's mean distance to the data over its
//!   distance to its 10th nearest neighbour. Lower is harder: the neighbours barely stand out.
//!
//! Both use Euclidean distances; for angular datasets the chord distance between the
//! normalised vectors, `sqrt(2 * cosine distance)`, so the figures of both metrics are on the
//! same scale. The mean distance of RC is taken over an evenly spaced sample of train rows.

use super::GroundTruth;
use crate::Metric;
use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;

/// Neighbours LID is estimated from (the paper's choice; ann-benchmarks files store 100).
pub const LID_K: usize = 100;
/// Neighbour whose distance RC divides by.
pub const RC_K: usize = 10;
/// Train rows sampled for RC's mean distance.
pub const RC_SAMPLE: usize = 4096;

/// The Euclidean-scale distance of a stored ground-truth distance.
fn euclidean_scale(metric: Metric, d: f32) -> f64 {
    match metric {
        Metric::Euclidean => f64::from(d),
        Metric::Angular => (2.0 * f64::from(d).max(0.0)).sqrt(),
    }
}

/// LID of one query from its ascending nearest distances (`k` of them); `None` when the
/// k-th distance is 0 (k duplicates of the query) or there are fewer than 2 distances.
pub fn lid(distances: ArrayView1<f32>, metric: Metric, k: usize) -> Option<f64> {
    let k = k.min(distances.len());
    if k < 2 {
        return None;
    }
    let rk = euclidean_scale(metric, distances[k - 1]);
    if rk.is_nan() || rk <= 0.0 {
        return None;
    }
    // Exact duplicates (r_i = 0) carry no scale information and are left out of the mean.
    let logs: Vec<f64> = distances
        .iter()
        .take(k)
        .map(|&d| euclidean_scale(metric, d))
        .filter(|&r| r > 0.0)
        .map(|r| (r / rk).ln())
        .collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    (mean < 0.0).then(|| -1.0 / mean)
}

/// Per-query LID from the ground truth (`None` for degenerate queries).
pub fn lids(gt: &GroundTruth, metric: Metric) -> Vec<Option<f64>> {
    gt.distances
        .rows()
        .into_iter()
        .map(|r| lid(r, metric, LID_K))
        .collect()
}

/// Per-query RC: mean distance to `sample` (train rows) over the distance to the
/// `RC_K`-th neighbour of the ground truth; `None` when that distance is 0.
pub fn relative_contrasts(
    test: ArrayView2<f32>,
    sample: ArrayView2<f32>,
    gt: &GroundTruth,
    metric: Metric,
) -> Vec<Option<f64>> {
    let means = mean_distances(test, sample, metric);
    let k = RC_K.min(gt.distances.ncols());
    means
        .iter()
        .zip(gt.distances.rows())
        .map(|(&mean, row)| {
            let rk = if k == 0 {
                0.0
            } else {
                euclidean_scale(metric, row[k - 1])
            };
            (rk > 0.0).then(|| mean / rk)
        })
        .collect()
}

/// Mean Euclidean-scale distance of each test row to the sample rows, in blocks of queries
/// (one f32 GEMM each, accumulated in f64) so memory stays bounded.
fn mean_distances(test: ArrayView2<f32>, sample: ArrayView2<f32>, metric: Metric) -> Vec<f64> {
    let prep = |m: ArrayView2<f32>| -> (Array2<f32>, Vec<f64>) {
        let mut a = m.to_owned();
        let mut norms = Vec::with_capacity(a.nrows());
        for mut r in a.rows_mut() {
            let n: f64 = r.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
            if metric == Metric::Angular && n > 0.0 {
                let inv = (1.0 / n.sqrt()) as f32;
                r.mapv_inplace(|v| v * inv);
                norms.push(1.0);
            } else {
                norms.push(n);
            }
        }
        (a, norms)
    };
    let (s, s_norms) = prep(sample);
    if s.nrows() == 0 {
        return vec![0.0; test.nrows()];
    }
    test.axis_chunks_iter(Axis(0), 256)
        .into_par_iter()
        .flat_map_iter(|block| {
            let (q, q_norms) = prep(block);
            let dots = q.dot(&s.t());
            dots.rows()
                .into_iter()
                .zip(q_norms)
                .map(|(row, qn)| {
                    let sum: f64 = row
                        .iter()
                        .zip(&s_norms)
                        .map(|(&dot, &sn)| (qn + sn - 2.0 * f64::from(dot)).max(0.0).sqrt())
                        .sum();
                    sum / row.len() as f64
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Rows `0, step, 2*step, ...` of an `n`-row matrix: at most `RC_SAMPLE` of them.
pub fn sample_step(n: usize) -> usize {
    n.div_ceil(RC_SAMPLE).max(1)
}

/// A distribution's summary: the values that were defined, and how many were not.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub undefined: usize,
    pub mean: f64,
    pub min: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub max: f64,
}

/// Summary of the defined values; `None` when there are none.
pub fn summarize(values: &[Option<f64>]) -> Option<Summary> {
    let mut v: Vec<f64> = values.iter().flatten().copied().collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| crate::metrics::percentile_sorted(&v, p);
    Some(Summary {
        count: v.len(),
        undefined: values.len() - v.len(),
        mean: v.iter().sum::<f64>() / v.len() as f64,
        min: v[0],
        p10: q(10.0),
        p25: q(25.0),
        p50: q(50.0),
        p75: q(75.0),
        p90: q(90.0),
        max: v[v.len() - 1],
    })
}

/// Per-query difficulty of a dataset's queries.
#[derive(Debug, Clone)]
pub struct Difficulty {
    pub lid: Vec<Option<f64>>,
    pub rc: Vec<Option<f64>>,
}

impl Difficulty {
    /// Both measures for every query; `train_sample` is the rows RC averages over.
    pub fn compute(
        test: ArrayView2<f32>,
        train_sample: ArrayView2<f32>,
        gt: &GroundTruth,
        metric: Metric,
    ) -> Difficulty {
        Difficulty {
            lid: lids(gt, metric),
            rc: relative_contrasts(test, train_sample, gt, metric),
        }
    }
}

/// The difficulty of a file's queries and its ground truth, reading only the test vectors,
/// the ground truth and a train sample; `None` when the file has no ground truth.
pub fn of_file(path: &std::path::Path) -> crate::Result<Option<(Difficulty, GroundTruth)>> {
    let info = super::hdf5_io::info(path)?;
    let s = super::hdf5_io::open_sample(path, sample_step(info.train))?;
    Ok(s.ground_truth.map(|gt| {
        let d = Difficulty::compute(s.test.view(), s.train_sample.view(), &gt, s.info.metric);
        (d, gt)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array1, array};

    #[test]
    fn lid_of_a_uniform_ball_is_its_dimension() {
        // In m dimensions the i-th of k neighbour distances grows like (i/k)^(1/m).
        for m in [2.0, 8.0, 30.0] {
            let k = 2000;
            let d: Array1<f32> = (1..=k)
                .map(|i| (i as f64 / k as f64).powf(1.0 / m) as f32)
                .collect();
            let est = lid(d.view(), Metric::Euclidean, k).unwrap();
            assert!((est - m).abs() / m < 0.05, "m={m}: {est}");
        }
    }

    #[test]
    fn lid_of_angular_uses_chord_distances() {
        // Cosine distances c give chord distances sqrt(2c): LID doubles against raw cosine.
        let chord: Array1<f32> = (1..=100).map(|i| (i as f32 / 100.0).powf(0.25)).collect();
        let cosine = chord.mapv(|r| r * r / 2.0);
        let a = lid(cosine.view(), Metric::Angular, 100).unwrap();
        let e = lid(chord.view(), Metric::Euclidean, 100).unwrap();
        assert!((a - e).abs() < 1e-3, "{a} {e}");
        assert_eq!(
            lid(array![0.0f32, 0.0, 0.0].view(), Metric::Euclidean, 3),
            None
        );
        assert_eq!(lid(array![1.0f32].view(), Metric::Euclidean, 1), None);
    }

    #[test]
    fn relative_contrast_is_mean_over_kth() {
        // One query at the origin; sample rows at distance 3 and 5; 10th neighbour at 2.
        let test = array![[0.0f32, 0.0]];
        let sample = array![[3.0f32, 0.0], [0.0, 5.0]];
        let mut d = Array2::<f32>::zeros((1, 12));
        d.row_mut(0).assign(&Array1::from_elem(12, 2.0));
        let gt = GroundTruth {
            neighbors: Array2::zeros((1, 12)),
            distances: d,
        };
        let rc = relative_contrasts(test.view(), sample.view(), &gt, Metric::Euclidean);
        assert!((rc[0].unwrap() - 2.0).abs() < 1e-6, "{rc:?}");
    }

    #[test]
    fn summary_skips_undefined_values() {
        let s = summarize(&[Some(1.0), None, Some(3.0), Some(2.0)]).unwrap();
        assert_eq!((s.count, s.undefined, s.min, s.max), (3, 1, 1.0, 3.0));
        assert!((s.mean - 2.0).abs() < 1e-12 && (s.p50 - 2.0).abs() < 1e-12);
        assert_eq!(summarize(&[None]), None);
    }
}

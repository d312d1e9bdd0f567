//! Helpers shared by the real-server backend tests: small real data (the bundled SIFT-5k
//! set), exact neighbours by brute force, recall by ann-benchmarks' distance rule, and the
//! bounds the tests assert.
#![allow(dead_code)]

use annbench::Metric;
use ndarray::{Array2, ArrayView2, s};
use std::path::PathBuf;

/// The bundled SIFT-5k set (4,500 train and 500 test rows of 128 dimensions).
pub fn sift_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/sift-5k-128-euclidean.hdf5")
}

/// The first `n` train rows (n <= 4,500) and the first `q` test rows (q <= 500) of the
/// bundled SIFT-5k set: real descriptors, so approximate indexes behave as on real data.
pub fn data(n: usize, q: usize) -> (Array2<f32>, Array2<f32>) {
    let d = annbench::dataset::open(&sift_path()).expect("open the bundled sift-5k set");
    assert!(
        n <= d.train.nrows() && q <= d.test.nrows(),
        "sift-5k has 4500 + 500 rows"
    );
    (
        d.train.slice(s![..n, ..]).to_owned(),
        d.test.slice(s![..q, ..]).to_owned(),
    )
}

/// Mean recall that an HNSW-style index must reach on these small tables with ef_search at
/// its maximum. Such an index is approximate (MHNSW also quantises the vectors it stores), so
/// a neighbour at a near-tied distance can be missed; measured recall is 0.99-1.0, and this
/// bound leaves a wide margin while still failing for a broken index or a wrong metric.
pub const HIGH_EF_RECALL: f64 = 0.95;

/// Mean recall over `queries` of the ids returned for each (one `Vec` per query).
pub fn mean_recall(
    metric: Metric,
    train: ArrayView2<f32>,
    queries: ArrayView2<f32>,
    answers: &[Vec<i64>],
    k: usize,
) -> f64 {
    let truth = exact(metric, train, queries, k);
    let total: f64 = queries
        .outer_iter()
        .zip(answers)
        .zip(&truth)
        .map(|((q, ids), t)| recall(metric, train, q.as_slice().unwrap(), ids, t))
        .sum();
    total / queries.nrows() as f64
}

/// Exact `k` nearest train rows of each query: (ids, distances).
pub fn exact(
    metric: Metric,
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    k: usize,
) -> Vec<Vec<(usize, f32)>> {
    test.outer_iter()
        .map(|q| {
            let mut d: Vec<(usize, f32)> = train
                .outer_iter()
                .enumerate()
                .map(|(i, t)| {
                    (
                        i,
                        metric.distance(q.as_slice().unwrap(), t.as_slice().unwrap()),
                    )
                })
                .collect();
            d.sort_by(|a, b| a.1.total_cmp(&b.1));
            d.truncate(k);
            d
        })
        .collect()
}

/// ann-benchmarks k-nn recall of one answer: returned ids whose recomputed distance is within
/// the true k-th distance + 1e-3, over k.
pub fn recall(
    metric: Metric,
    train: ArrayView2<f32>,
    q: &[f32],
    ids: &[i64],
    truth: &[(usize, f32)],
) -> f64 {
    let k = truth.len();
    let limit = truth[k - 1].1 + 1e-3;
    let hits = ids
        .iter()
        .take(k)
        .filter(|&&id| metric.distance(q, train.row(id as usize).as_slice().unwrap()) <= limit)
        .count();
    hits as f64 / k as f64
}

/// A distinct dataset name per test so parallel tests never share a table (fixed across runs,
/// so reruns reuse or replace the same few tables instead of piling up new ones).
pub fn name(test: &str) -> String {
    format!("test-{test}")
}

/// Loading `train` cut to 64 dimensions, then with `value` at `cell`, must both fail before
/// anything is sent, with errors that name the dimension, and the row and the bad value.
pub fn assert_bad_train_is_named(
    b: &mut dyn annbench::backend::Backend,
    spec: &annbench::backend::TableSpec,
    train: &Array2<f32>,
    cell: (usize, usize),
    value: f32,
) {
    let e = b.load(spec, train.slice(s![.., ..64])).unwrap_err();
    assert!(e.to_string().contains("64 dimensions"), "{e}");
    let mut bad = train.clone();
    bad[[cell.0, cell.1]] = value;
    let e = b.load(spec, bad.view()).unwrap_err().to_string();
    let row = format!("row {}", cell.0);
    assert!(e.contains(&row) && e.contains(&value.to_string()), "{e}");
}

/// The first `n` train and `q` test rows of a bundled dataset (`datasets/<name>.hdf5`), and
/// its metric.
pub fn bundled(name: &str, n: usize, q: usize) -> (Array2<f32>, Array2<f32>, Metric) {
    let path = sift_path().with_file_name(format!("{name}.hdf5"));
    let d = annbench::dataset::hdf5_io::open_head(&path, n, q)
        .unwrap_or_else(|e| panic!("bundled dataset {name}: {e}"));
    (d.train, d.test, d.metric)
}

/// Mean recall of `searcher` over `queries`, after one untimed warm-up pass as the runner
/// does; every answer must hold `k` ids.
pub fn searcher_recall(
    s: &mut dyn annbench::backend::Searcher,
    metric: Metric,
    train: ArrayView2<f32>,
    queries: ArrayView2<f32>,
    k: usize,
) -> f64 {
    let mut ids = Vec::new();
    for q in queries.outer_iter() {
        s.search(q.as_slice().unwrap(), k, &mut ids).unwrap();
    }
    let answers: Vec<Vec<i64>> = queries
        .outer_iter()
        .map(|q| {
            s.search(q.as_slice().unwrap(), k, &mut ids).unwrap();
            ids.clone()
        })
        .collect();
    assert!(answers.iter().all(|a| a.len() == k), "{answers:?}");
    mean_recall(metric, train, queries, &answers, k)
}

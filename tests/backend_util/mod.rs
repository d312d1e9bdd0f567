//! Helpers shared by the real-server backend tests: small real data (SIFT-5k subset when the
//! shared datasets are present, else a seeded synthetic set), exact neighbours by brute force,
//! and recall by ann-benchmarks' distance rule.
#![allow(dead_code)]

use annbench::Metric;
use ndarray::{Array2, ArrayView2, s};
use std::path::PathBuf;

/// The SIFT-5k base vectors if a copy of the shared datasets is reachable from the repo.
fn sift_path() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let rel = "shared/datasets/sift-5k/base_5000x128_f32.bin";
    [
        root.join("..").join(rel),
        root.join("../..").join(rel),
        PathBuf::from("/work").join(rel),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// `n` train rows and `q` query rows of dimension 128: SIFT-5k rows when available (queries
/// are rows after the train rows), else clustered pseudo-random data from a fixed seed.
pub fn data(n: usize, q: usize) -> (Array2<f32>, Array2<f32>) {
    if let Some(p) = sift_path() {
        let bytes = std::fs::read(&p).expect("read sift-5k");
        let all: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let m = Array2::from_shape_vec((all.len() / 128, 128), all).expect("shape");
        assert!(n + q <= m.nrows());
        return (
            m.slice(s![..n, ..]).to_owned(),
            m.slice(s![n..n + q, ..]).to_owned(),
        );
    }
    let mut state = 0x9e37_79b9_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as f32) / (u32::MAX >> 1) as f32
    };
    let gen_rows = |rows: usize, next: &mut dyn FnMut() -> f32| {
        Array2::from_shape_fn((rows, 128), |_| (next() * 100.0).floor())
    };
    let train = gen_rows(n, &mut next);
    let test = gen_rows(q, &mut next);
    (train, test)
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
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("datasets")
        .join(format!("{name}.hdf5"));
    let d = annbench::dataset::hdf5_io::open_head(&path, n, q)
        .unwrap_or_else(|e| panic!("bundled dataset {name}: {e}"));
    (d.train, d.test, d.metric)
}

/// Mean ann-benchmarks recall of `searcher` over `queries` (after one untimed warm-up pass,
/// as the runner does).
pub fn mean_recall(
    s: &mut dyn annbench::backend::Searcher,
    metric: Metric,
    train: ArrayView2<f32>,
    queries: ArrayView2<f32>,
    k: usize,
) -> f64 {
    let truth = exact(metric, train, queries, k);
    let mut ids = Vec::new();
    for q in queries.outer_iter() {
        s.search(q.as_slice().unwrap(), k, &mut ids).unwrap();
    }
    let mut sum = 0.0;
    for (q, t) in queries.outer_iter().zip(&truth) {
        s.search(q.as_slice().unwrap(), k, &mut ids).unwrap();
        sum += recall(metric, train, q.as_slice().unwrap(), &ids, t);
    }
    sum / truth.len() as f64
}

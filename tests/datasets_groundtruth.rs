//! Exact ground truth against an independent reference (NGT's published SIFT top-20) and
//! against a float64 brute force.

use annbench::Metric;
use annbench::dataset::groundtruth::{compute, compute_with_stats, try_compute};
use annbench::dataset::rng::Rng;
use annbench::dataset::vectors;
use ndarray::{Array2, ArrayView2};
use std::path::PathBuf;

/// A file of `tests/data/` (see tests/data/README.md for sources and licences).
fn test_data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A `.npy` matrix of `tests/data/` as float32 (SIFT descriptors are stored as uint8: they
/// are integers, so the widening is exact).
fn read_npy(name: &str) -> Array2<f32> {
    vectors::read(&test_data(name), vectors::Format::Npy).unwrap()
}

#[test]
fn reproduces_ngt_sift_top20() {
    let base = read_npy("sift5k_base_5000x128_u8.npy");
    let query = read_npy("sift5k_query_3x128_u8.npy");
    assert_eq!((base.nrows(), query.nrows()), (5000, 3));
    let gt = compute(base.view(), query.view(), Metric::Euclidean, 20);
    let expected = std::fs::read_to_string(test_data("sift5k_expected_top20_l2.tsv")).unwrap();
    let mut rows = 0;
    for line in expected.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (q, rank, id, dist): (usize, usize, i32, f32) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        assert_eq!(gt.neighbors[[q, rank - 1]], id, "query {q} rank {rank}");
        let got = gt.distances[[q, rank - 1]];
        assert_eq!(
            format!("{got:.3}"),
            format!("{dist:.3}"),
            "query {q} rank {rank}"
        );
        rows += 1;
    }
    assert_eq!(rows, 60);
}

/// f64 brute force: all keys sorted, returns (ids, distances) for k.
fn reference(
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    metric: Metric,
    k: usize,
) -> Vec<Vec<(f64, i32)>> {
    test.rows()
        .into_iter()
        .map(|q| {
            let mut all: Vec<(f64, i32)> = train
                .rows()
                .into_iter()
                .enumerate()
                .map(|(i, x)| {
                    let (mut dot, mut qq, mut xx, mut l2) = (0f64, 0f64, 0f64, 0f64);
                    for (&a, &b) in q.iter().zip(x.iter()) {
                        let (a, b) = (f64::from(a), f64::from(b));
                        dot += a * b;
                        qq += a * a;
                        xx += b * b;
                        l2 += (a - b) * (a - b);
                    }
                    let d = match metric {
                        Metric::Euclidean => l2.sqrt(),
                        Metric::Angular if qq == 0.0 || xx == 0.0 => 1.0,
                        Metric::Angular => 1.0 - dot / (qq.sqrt() * xx.sqrt()),
                    };
                    (d, i as i32)
                })
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            all.truncate(k);
            all
        })
        .collect()
}

/// Ids agree except where the reference distance ties with a neighbour's.
fn assert_agrees(train: &Array2<f32>, test: &Array2<f32>, metric: Metric, k: usize) -> usize {
    let (gt, stats) = compute_with_stats(train.view(), test.view(), metric, k);
    let want = reference(train.view(), test.view(), metric, k);
    for (qi, row) in want.iter().enumerate() {
        assert_eq!(gt.neighbors.ncols(), row.len());
        for (j, &(d, id)) in row.iter().enumerate() {
            let got_id = gt.neighbors[[qi, j]];
            let got_d = f64::from(gt.distances[[qi, j]]);
            assert!(
                (got_d - d).abs() <= 1e-6 * d.max(1.0),
                "query {qi} rank {j}: {got_d} vs {d}"
            );
            if got_id != id {
                let tie = row.iter().any(|&(d2, id2)| id2 != id && d2 == d);
                assert!(
                    tie,
                    "query {qi} rank {j}: id {got_id} vs reference {id} (no tie)"
                );
            }
        }
    }
    stats.fallbacks
}

fn random(rng: &mut Rng, n: usize, d: usize, scale: f64, offset: f64) -> Array2<f32> {
    Array2::from_shape_fn((n, d), |_| (offset + scale * rng.normal()) as f32)
}

#[test]
fn agrees_with_f64_reference_on_random_data() {
    let mut rng = Rng::new(11);
    for metric in [Metric::Euclidean, Metric::Angular] {
        // More train rows than one GEMM block, queries spanning two rayon blocks.
        let train = random(&mut rng, 5000, 24, 1.0, 0.0);
        let test = random(&mut rng, 150, 24, 1.0, 0.0);
        assert_agrees(&train, &test, metric, 100);
        // k larger than train: all rows, in order.
        let small = random(&mut rng, 30, 24, 1.0, 0.0);
        assert_agrees(&small, &test, metric, 100);
    }
}

#[test]
fn rounding_traps_are_still_exact() {
    // A large common offset makes |x|^2 - 2 q.x cancel catastrophically in f32: the proof
    // must fail and the f64 rescan must take over, not a wrong answer.
    let mut rng = Rng::new(5);
    let train = random(&mut rng, 3000, 16, 0.01, 1000.0);
    let test = random(&mut rng, 20, 16, 0.01, 1000.0);
    let fallbacks = assert_agrees(&train, &test, Metric::Euclidean, 10);
    assert!(
        fallbacks > 0,
        "expected the rounding proof to reject some queries"
    );
    // Duplicated rows and zero vectors: exact ties and the angular zero case.
    let mut dup = random(&mut rng, 500, 8, 1.0, 0.0);
    for i in 0..100 {
        let src = dup.row(i).to_owned();
        dup.row_mut(i + 250).assign(&src);
    }
    dup.row_mut(3).fill(0.0);
    let mut q = random(&mut rng, 10, 8, 1.0, 0.0);
    q.row_mut(0).fill(0.0);
    assert_agrees(&dup, &q, Metric::Angular, 50);
    assert_agrees(&dup, &q, Metric::Euclidean, 50);
}

#[test]
fn try_compute_rejects_bad_shapes() {
    let a = Array2::<f32>::zeros((4, 3));
    let b = Array2::<f32>::zeros((2, 2));
    let err = try_compute(a.view(), b.view(), Metric::Euclidean, 2)
        .unwrap_err()
        .to_string();
    assert!(err.contains("dimension mismatch"), "{err}");
    assert!(try_compute(a.view(), a.view(), Metric::Euclidean, 0).is_err());
}

//! Exact ground truth on inputs that stress the blocked f32 kernel and the candidate proof:
//! ties at the k-th distance, duplicate rows, k = n, sizes that are no multiple of any block,
//! d = 1, large magnitudes, non-contiguous views. Each is compared, bit for bit, with a plain
//! float64 brute force (keys summed in index order, ties by lower id, distances rounded to f32).

use annbench::Metric;
use annbench::dataset::groundtruth::{compute, compute_with_stats, try_compute};
use annbench::dataset::rng::Rng;
use ndarray::{Array2, ArrayView2, s};

/// Plain f64 brute force: the k nearest (distance as f32, id) of each query.
fn brute_force(
    train: ArrayView2<f32>,
    test: ArrayView2<f32>,
    metric: Metric,
    k: usize,
) -> Vec<Vec<(f32, i32)>> {
    test.rows()
        .into_iter()
        .map(|q| {
            let mut all: Vec<(f64, i32)> = train
                .rows()
                .into_iter()
                .enumerate()
                .map(|(i, x)| {
                    let (mut l2, mut dot, mut qq, mut xx) = (0f64, 0f64, 0f64, 0f64);
                    for (&a, &b) in q.iter().zip(x) {
                        let (a, b) = (f64::from(a), f64::from(b));
                        l2 += (a - b) * (a - b);
                        dot += a * b;
                        qq += a * a;
                        xx += b * b;
                    }
                    let key = match metric {
                        Metric::Euclidean => l2,
                        Metric::Angular if qq == 0.0 || xx == 0.0 => 1.0,
                        Metric::Angular => 1.0 - dot / (qq.sqrt() * xx.sqrt()),
                    };
                    (key, i as i32)
                })
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            all.truncate(k);
            all.into_iter()
                .map(|(key, id)| match metric {
                    Metric::Euclidean => (key.sqrt() as f32, id),
                    Metric::Angular => (key as f32, id),
                })
                .collect()
        })
        .collect()
}

/// Same ids in the same order and the same f32 distances (bits) as the brute force; returns
/// how many queries fell back to the exact scan.
fn assert_exact(train: ArrayView2<f32>, test: ArrayView2<f32>, metric: Metric, k: usize) -> usize {
    let (gt, stats) = compute_with_stats(train, test, metric, k);
    let want = brute_force(train, test, metric, k);
    assert_eq!(gt.neighbors.dim(), (test.nrows(), k.min(train.nrows())));
    for (qi, row) in want.iter().enumerate() {
        let got: Vec<(u32, i32)> = gt
            .distances
            .row(qi)
            .iter()
            .zip(gt.neighbors.row(qi))
            .map(|(d, &id)| (d.to_bits(), id))
            .collect();
        let row: Vec<(u32, i32)> = row.iter().map(|&(d, id)| (d.to_bits(), id)).collect();
        assert_eq!(got, row, "{metric:?}, k={k}, query {qi}");
    }
    stats.fallbacks
}

fn integers(rng: &mut Rng, n: usize, d: usize, values: usize) -> Array2<f32> {
    Array2::from_shape_simple_fn((n, d), || rng.below(values) as f32 - (values / 2) as f32)
}

#[test]
fn ties_at_the_kth_distance_are_broken_by_lower_id() {
    // Few distinct values in 3 dimensions: every distance is shared by many rows, so the k-th
    // falls inside a tie; the nearest ties must be the lowest ids, as in the brute force.
    let mut rng = Rng::new(21);
    let train = integers(&mut rng, 3000, 3, 5);
    let test = integers(&mut rng, 40, 3, 5);
    for metric in [Metric::Euclidean, Metric::Angular] {
        for k in [1, 10, 100, 250] {
            assert_exact(train.view(), test.view(), metric, k);
        }
    }
}

#[test]
fn duplicate_rows_come_in_id_order() {
    // 150 distinct rows, each 12 times in shuffled positions: k = 30 cuts through copies.
    let mut rng = Rng::new(22);
    let distinct = Array2::from_shape_simple_fn((150, 20), || rng.normal() as f32);
    let mut order: Vec<usize> = (0..150 * 12).map(|i| i % 150).collect();
    rng.shuffle(&mut order);
    let train = Array2::from_shape_fn((order.len(), 20), |(i, j)| distinct[[order[i], j]]);
    // Queries that are train rows themselves (distance 0 to all their copies) and new ones.
    let mut test = Array2::from_shape_simple_fn((30, 20), || rng.normal() as f32);
    for i in 0..10 {
        test.row_mut(i).assign(&train.row(i * 37));
    }
    for metric in [Metric::Euclidean, Metric::Angular] {
        assert_exact(train.view(), test.view(), metric, 30);
    }
}

#[test]
fn k_equal_to_and_above_n_returns_every_row_in_order() {
    let mut rng = Rng::new(23);
    let train = Array2::from_shape_simple_fn((37, 9), || rng.normal() as f32);
    let test = Array2::from_shape_simple_fn((5, 9), || rng.normal() as f32);
    for metric in [Metric::Euclidean, Metric::Angular] {
        assert_exact(train.view(), test.view(), metric, 37);
        let gt = compute(train.view(), test.view(), metric, 100);
        assert_eq!(gt.neighbors.ncols(), 37, "k above n gives n columns");
        assert_exact(train.view(), test.view(), metric, 100);
    }
}

#[test]
fn sizes_off_every_block_boundary() {
    // Train rows just past two 1,024-row blocks and query counts that split unevenly.
    let mut rng = Rng::new(24);
    let train = Array2::from_shape_simple_fn((2 * 1024 + 77, 19), || rng.normal() as f32);
    for queries in [1, 17, 83] {
        let test = Array2::from_shape_simple_fn((queries, 19), || rng.normal() as f32);
        for metric in [Metric::Euclidean, Metric::Angular] {
            assert_exact(train.view(), test.view(), metric, 33);
        }
    }
}

#[test]
fn one_dimension() {
    // d = 1: distances are |q - x|, with many near-ties; angular is +-1 only (all ties).
    let mut rng = Rng::new(25);
    let train = Array2::from_shape_simple_fn((1500, 1), || rng.normal() as f32);
    let test = Array2::from_shape_simple_fn((12, 1), || rng.normal() as f32);
    for metric in [Metric::Euclidean, Metric::Angular] {
        for k in [1, 20, 1500] {
            assert_exact(train.view(), test.view(), metric, k);
        }
    }
}

#[test]
fn large_magnitudes() {
    // Squared lengths near float32's limit that checked input still accepts (|x|^2 up to
    // f32::MAX / 4), and a large common offset whose f32 scores cancel.
    let mut rng = Rng::new(26);
    for (scale, offset) in [(5e17f64, 0.0), (1.0, 3e4)] {
        let mut m = |rows| {
            Array2::from_shape_simple_fn((rows, 8), || (offset + scale * rng.normal()) as f32)
        };
        let (train, test) = (m(1200), m(15));
        try_compute(train.view(), test.view(), Metric::Euclidean, 10)
            .expect("within the checked range");
        for metric in [Metric::Euclidean, Metric::Angular] {
            assert_exact(train.view(), test.view(), metric, 10);
        }
    }
}

#[test]
fn views_of_any_layout_give_the_same_answer() {
    // Column-major train, a strided query view: the same result as standard-layout copies.
    let mut rng = Rng::new(27);
    let train_t = Array2::from_shape_simple_fn((14, 1100), || rng.normal() as f32);
    let train = train_t.t();
    let wide = Array2::from_shape_simple_fn((9, 28), || rng.normal() as f32);
    let test = wide.slice(s![.., ..;2]);
    for metric in [Metric::Euclidean, Metric::Angular] {
        let a = compute(train, test, metric, 25);
        let b = compute(
            train.as_standard_layout().view(),
            test.as_standard_layout().view(),
            metric,
            25,
        );
        assert_eq!((&a.neighbors, &a.distances), (&b.neighbors, &b.distances));
        assert_exact(train, test, metric, 25);
    }
}

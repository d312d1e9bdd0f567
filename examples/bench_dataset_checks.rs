//! What the load-time checks of a dataset cost: the dataset fingerprint stored with every
//! point (`annbench::dataset::fingerprint`, over train, test and ground truth) and the
//! ground-truth check (`annbench::dataset::gtcheck::verify`, sampled recomputation).
//!
//! Usage: `cargo run --release --example bench_dataset_checks -- TRAIN DIM [TEST] [K] [RUNS]`
//! (defaults: 10,000 test queries, k=100, 3 runs). Data is generated in memory (seeded), with
//! ground truth whose ids are random and whose distances are exactly those ids' distances,
//! sorted, so the check runs to the end as on a correct file. Prints each run's seconds.

use annbench::Metric;
use annbench::dataset::{Dataset, GroundTruth, fingerprint, gtcheck, rng::Rng};
use ndarray::Array2;
use rayon::prelude::*;
use std::time::Instant;

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .map(|a| a.parse().expect("numeric argument"))
        .unwrap_or(default)
}

fn main() {
    let (n, d, q, k, runs) = (
        arg(1, 100_000),
        arg(2, 768),
        arg(3, 10_000),
        arg(4, 100),
        arg(5, 3),
    );
    let mut rng = Rng::new(42);
    let train = Array2::from_shape_simple_fn((n, d), || rng.normal() as f32);
    let test = Array2::from_shape_simple_fn((q, d), || rng.normal() as f32);
    let ids: Vec<Vec<i32>> = (0..q)
        .map(|_| (0..k).map(|_| rng.below(n) as i32).collect())
        .collect();
    let rows: Vec<Vec<(f32, i32)>> = ids
        .par_iter()
        .enumerate()
        .map(|(i, row)| {
            let q = test.row(i).to_vec();
            let mut v: Vec<(f32, i32)> = row
                .iter()
                .map(|&id| {
                    (
                        Metric::Euclidean.distance(&train.row(id as usize).to_vec(), &q),
                        id,
                    )
                })
                .collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            v
        })
        .collect();
    let neighbors = Array2::from_shape_fn((q, k), |(i, j)| rows[i][j].1);
    let distances = Array2::from_shape_fn((q, k), |(i, j)| rows[i][j].0);
    let ds = Dataset {
        name: "bench".into(),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: Some(GroundTruth {
            neighbors,
            distances,
        }),
    };
    let gb = (n + q) as f64 * d as f64 * 4.0 / 1e9;
    println!(
        "train {n} x {d}, test {q}, k={k} ({gb:.2} GB of vectors), {} threads",
        rayon::current_num_threads()
    );
    for run in 1..=runs {
        let t = Instant::now();
        let f = fingerprint(&ds, 10);
        let fp = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let cov = gtcheck::verify(&ds).expect("consistent ground truth");
        let gt = t.elapsed().as_secs_f64();
        println!(
            "run {run}: fingerprint {fp:.3} s ({:.1} GB/s, {}...), ground-truth check {gt:.3} s \
             ({} of {} rows)",
            gb / fp,
            &f[..8],
            cov.rows,
            cov.of
        );
    }
}

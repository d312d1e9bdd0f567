//! `annbench run` end to end with the in-process `exact` backend (no server): points are
//! written in ann-benchmarks' layout, a second run skips them, bad input fails clearly.

use annbench::Metric;
use annbench::dataset::{Dataset, save};
use ndarray::Array2;
use std::process::ExitCode;

fn run(args: &[&str]) -> ExitCode {
    annbench::cli::main(std::iter::once("annbench").chain(args.iter().copied()))
}

#[test]
fn exact_sweep_writes_points_and_a_rerun_skips_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = Dataset {
        name: "cli-euclidean".into(),
        metric: Metric::Euclidean,
        train: Array2::from_shape_fn((300, 8), |(i, j)| ((i * 31 + j * 7) % 97) as f32),
        test: Array2::from_shape_fn((20, 8), |(i, j)| ((i * 13 + j * 5) % 89) as f32 + 0.5),
        ground_truth: None,
    };
    let file = dir.path().join("cli-euclidean.hdf5");
    save(&data, &file).unwrap();
    let results = dir.path().join("res");
    let (f, r) = (file.to_str().unwrap(), results.to_str().unwrap());
    let args = [
        "run",
        "--dataset",
        f,
        "--algorithm",
        "exact",
        "--results",
        r,
        "--runs",
        "2",
        "--min-time",
        "0",
        "--clients",
        "1,2",
        "--count",
        "5",
    ];
    assert_eq!(run(&args), ExitCode::SUCCESS);
    let points = annbench::results::load_points(&results, "cli-euclidean", 5, dir.path()).unwrap();
    assert_eq!(points.len(), 2);
    for p in &points {
        assert_eq!(
            p.metrics.recall, 1.0,
            "exact search must find the exact neighbours"
        );
        assert_eq!(p.passes.len(), 2);
        assert!(p.environment.cpu_cores >= 1 && !p.environment.finished_at.is_empty());
    }
    let stamps = || -> Vec<std::time::SystemTime> {
        let algo = results.join("cli-euclidean/5/exact");
        let mut files: Vec<_> = std::fs::read_dir(&algo)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().modified().unwrap())
            .collect()
    };
    let before = stamps();
    assert_eq!(before.len(), 2);
    assert_eq!(run(&args), ExitCode::SUCCESS);
    assert_eq!(stamps(), before, "a rerun must not rewrite stored points");

    // Bad input: unknown override key, unknown algorithm, bad clients.
    assert_eq!(
        run(&[
            "run",
            "--dataset",
            f,
            "--algorithm",
            "exact",
            "--results",
            r,
            "--build",
            "M=8"
        ]),
        ExitCode::FAILURE
    );
    assert_eq!(
        run(&[
            "run",
            "--dataset",
            f,
            "--algorithm",
            "faiss",
            "--results",
            r
        ]),
        ExitCode::from(2),
        "an unknown algorithm is a usage error, like any other"
    );
    assert_ne!(
        run(&[
            "run",
            "--dataset",
            f,
            "--algorithm",
            "exact",
            "--clients",
            "x"
        ]),
        ExitCode::SUCCESS
    );
}

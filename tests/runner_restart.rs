//! `annbench run --restart` against real managed servers: the `twin` instances
//! `scripts/databases.sh up-instance` started (scripts/test.sh), restarted through the script
//! that `servers.env` names. The cold series is stored beside the warm one, and a server the
//! script does not manage is refused before anything runs. They fail, never skip, without the
//! servers' URLs.

mod backend_util;

use annbench::Metric;
use annbench::dataset::{Dataset, save};
use annbench::results::{PointResult, load_points};
use backend_util::{data, name};
use std::process::ExitCode;

fn url(var: &str) -> String {
    annbench::connect::lookup(var).unwrap().unwrap_or_else(|| {
        panic!("{var} is not set: run scripts/databases.sh up and up-instance twin")
    })
}

fn run(args: &[&str]) -> ExitCode {
    annbench::cli::main(std::iter::once("annbench").chain(args.iter().copied()))
}

/// A sweep of one build and two query points on `server` (`--mariadb twin=URL` style) with
/// `--restart`; the stored points.
fn sweep(
    algorithm: &str,
    flag: &str,
    server: &str,
    extra: &[&str],
) -> (ExitCode, Vec<PointResult>) {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = data(1200, 15);
    let dataset = Dataset {
        name: name(&format!("{algorithm}-restart")),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let file = dir.path().join(format!("{}.hdf5", dataset.name));
    save(&dataset, &file).unwrap();
    let results = dir.path().join("results");
    let (f, r) = (file.to_str().unwrap(), results.to_str().unwrap());
    let mut args = vec![
        "run",
        "--dataset",
        f,
        "--algorithm",
        algorithm,
        "--results",
        r,
        "--runs",
        "2",
        "--min-time",
        "0",
        "--restart",
        "-q",
        flag,
        server,
    ];
    args.extend_from_slice(extra);
    let code = run(&args);
    let points = load_points(&results, &dataset.name, 10, dir.path()).unwrap_or_default();
    (code, points)
}

fn check_cold_series(points: &[PointResult], queries: usize) {
    let warm: Vec<&PointResult> = points
        .iter()
        .filter(|p| p.label.as_deref() == Some("twin"))
        .collect();
    let cold: Vec<&PointResult> = points
        .iter()
        .filter(|p| p.label.as_deref() == Some("twin-cold"))
        .collect();
    assert_eq!((warm.len(), cold.len()), (queries, queries), "{points:?}");
    for c in cold {
        // One timed pass right after the restart, and the recall pass.
        assert_eq!(c.passes.len(), 1);
        assert!(c.metrics.recall > 0.0);
        let w = warm.iter().find(|w| w.query_args == c.query_args).unwrap();
        assert_eq!(w.build_args, c.build_args);
        assert_eq!(
            w.build_seconds, c.build_seconds,
            "the cold series reports the same build"
        );
        assert_eq!(
            (w.index_size_bytes, w.build_phases.len()),
            (c.index_size_bytes, c.build_phases.len()),
            "the cold series reports the same index"
        );
    }
}

#[test]
fn postgres_is_restarted_and_measured_cold() {
    let server = format!("twin={}", url("ANNBENCH_POSTGRES_TWIN_URL"));
    let (code, points) = sweep(
        "pgvector",
        "--postgres",
        &server,
        &[
            "--build",
            "M=8",
            "--build",
            "ef_construction=32",
            "--query",
            "ef_search=10,40",
        ],
    );
    assert_eq!(code, ExitCode::SUCCESS);
    check_cold_series(&points, 2);
}

#[test]
fn mariadb_is_restarted_and_measured_cold() {
    let server = format!("twin={}", url("ANNBENCH_MARIADB_TWIN_URL"));
    let (code, points) = sweep(
        "mariadb",
        "--mariadb",
        &server,
        &["--build", "M=8", "--query", "ef_search=10,40"],
    );
    assert_eq!(code, ExitCode::SUCCESS);
    check_cold_series(&points, 2);
}

#[test]
fn a_server_the_script_does_not_manage_is_refused_before_any_work() {
    // No ANNBENCH_MANAGED_1 line: nothing listens there, and nothing is connected to.
    let (code, points) = sweep(
        "mariadb",
        "--mariadb",
        "twin=mysql://annbench:x@127.0.0.1:1/annbench",
        &["--build", "M=8", "--query", "ef_search=10"],
    );
    assert_ne!(code, ExitCode::SUCCESS);
    assert!(points.is_empty());
}

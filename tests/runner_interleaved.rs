//! Two servers of one database in one sweep, interleaved, against the real servers: the main
//! MariaDB and PostgreSQL and their `twin` instances (`scripts/databases.sh up-instance twin
//! ...`, started by scripts/test.sh). Every point carries the run's id, every timed pass its
//! round, the rounds match between the servers, each server's own processes are read for its
//! cost, and a point missing on one server is measured again on both. They fail, never skip,
//! without the servers' URLs.

mod backend_util;

use annbench::Metric;
use annbench::backend::{BackendOptions, create};
use annbench::connect::ServerKind;
use annbench::dataset::Dataset;
use annbench::results::PointResult;
use annbench::runner::{NoProgress, SweepOptions, SweepSummary, run_sweep_servers_with};
use backend_util::{data, name};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

fn url(var: &str) -> String {
    annbench::connect::lookup(var).unwrap().unwrap_or_else(|| {
        panic!("{var} is not set: run scripts/databases.sh up and up-instance twin")
    })
}

/// The two servers of `kind` as `a` (main) and `b` (twin).
fn servers(kind: ServerKind, main: &str, twin: &str) -> BackendOptions {
    let mut opts = BackendOptions::default();
    opts.add_urls(
        kind,
        &[format!("a={}", url(main)), format!("b={}", url(twin))],
    )
    .unwrap();
    opts
}

fn sweep(algorithm: &str, grid: &str, backend: &BackendOptions, dir: &Path) -> SweepSummary {
    let (train, test) = data(1500, 20);
    let dataset = Dataset {
        name: name(&format!("{algorithm}-interleaved")),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let config = dir.join("grid.yml");
    std::fs::write(&config, grid).unwrap();
    let opts = SweepOptions {
        dataset: dataset.name.clone(),
        algorithms: vec![algorithm.into()],
        config_files: vec![config],
        runs: 4,
        min_time: Duration::from_millis(40),
        results_dir: dir.join("results"),
        backend: backend.clone(),
        ..SweepOptions::default()
    };
    run_sweep_servers_with(dataset, &opts, &NoProgress, &|algo, server| match server {
        Some(s) => create(algo, &backend.for_server(s)),
        None => panic!("an interleaved run connects to named servers only"),
    })
    .unwrap()
}

fn of<'s>(summary: &'s SweepSummary, label: &str) -> Vec<&'s PointResult> {
    summary
        .points
        .iter()
        .map(|p| &p.result)
        .filter(|p| p.label.as_deref() == Some(label))
        .collect()
}

/// (build, round) of every timed pass of a point.
fn rounds(p: &PointResult) -> BTreeSet<(usize, usize)> {
    p.passes
        .iter()
        .map(|pass| {
            (
                pass.build,
                pass.round.expect("a timed pass without its round"),
            )
        })
        .collect()
}

fn check_paired(summary: &SweepSummary, points: usize) {
    let (a, b) = (of(summary, "a"), of(summary, "b"));
    assert_eq!(
        (a.len(), b.len()),
        (points, points),
        "{:?}",
        summary.warnings
    );
    let run = a[0]
        .metrics
        .interleave
        .as_ref()
        .expect("no interleave record");
    assert_eq!(run.servers, vec!["a".to_string(), "b".to_string()]);
    for (pa, pb) in a.iter().zip(&b) {
        assert_eq!(pa.query_args, pb.query_args);
        assert_eq!(pa.metrics.interleave.as_ref(), Some(run));
        assert_eq!(pb.metrics.interleave.as_ref(), Some(run));
        let (ra, rb) = (rounds(pa), rounds(pb));
        assert_eq!(ra, rb, "the servers ran different rounds");
        // Each round once per point and server, numbered from 0 without gaps.
        assert_eq!(ra.len(), pa.passes.len());
        assert!(ra.len() >= 4, "{ra:?}");
        assert_eq!(ra.iter().map(|r| r.1).max(), Some(ra.len() - 1));
    }
}

#[test]
fn two_mariadb_servers_run_interleaved_and_each_is_read_for_its_own_cost() {
    let dir = tempfile::tempdir().unwrap();
    let backend = servers(
        ServerKind::MariaDb,
        "ANNBENCH_MARIADB_URL",
        "ANNBENCH_MARIADB_TWIN_URL",
    );
    let grid = "algorithm: mariadb\ngroups:\n  - build: {M: 8}\n    query: {ef_search: [10, 40]}\n";
    let summary = sweep("mariadb", grid, &backend, dir.path());
    check_paired(&summary, 2);
    // Two mariadbd processes on the machine: each server's CPU comes from its own process.
    let source = |label: &str| {
        let p = of(&summary, label)[0];
        let cost = p.metrics.server.as_ref().expect("no server cost");
        assert!(cost.cpu_per_query.is_some_and(|c| c > 0.0), "{cost:?}");
        cost.cpu_source.clone().unwrap()
    };
    assert_ne!(source("a"), source("b"));

    // A point lost on one server is measured again on both: its partner must be of the same run.
    let lost = &summary
        .points
        .iter()
        .find(|p| p.result.label.as_deref() == Some("b"))
        .unwrap()
        .path;
    std::fs::remove_file(lost).unwrap();
    let again = sweep("mariadb", grid, &backend, dir.path());
    let measured: Vec<&str> = again
        .points
        .iter()
        .filter(|p| !p.skipped)
        .filter_map(|p| p.result.label.as_deref())
        .collect();
    assert_eq!(measured.len(), 2, "{measured:?}");
    assert!(measured.contains(&"a") && measured.contains(&"b"));
}

#[test]
fn two_postgres_servers_run_interleaved() {
    let dir = tempfile::tempdir().unwrap();
    let backend = servers(
        ServerKind::Postgres,
        "ANNBENCH_POSTGRES_URL",
        "ANNBENCH_POSTGRES_TWIN_URL",
    );
    let grid = "algorithm: pgvector\ngroups:\n  - build: {M: 8, ef_construction: 32}\n    query: {ef_search: [20]}\n";
    let summary = sweep("pgvector", grid, &backend, dir.path());
    check_paired(&summary, 1);
    for label in ["a", "b"] {
        let p = of(&summary, label)[0];
        let cost = p.metrics.server.as_ref().expect("no server cost");
        assert!(cost.cpu_per_query.is_some(), "{label}: {cost:?}");
    }
}

#[test]
fn one_server_under_two_names_is_refused() {
    let mut backend = BackendOptions::default();
    let main = url("ANNBENCH_MARIADB_URL");
    backend
        .add_urls(
            ServerKind::MariaDb,
            &[format!("a={main}"), format!("b={main}")],
        )
        .unwrap();
    let (train, test) = data(100, 5);
    let dataset = Dataset {
        name: name("same-server"),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let opts = SweepOptions {
        dataset: dataset.name.clone(),
        algorithms: vec!["mariadb".into()],
        build_overrides: vec!["M=8".into()],
        query_overrides: vec!["ef_search=10".into()],
        results_dir: dir.path().join("results"),
        backend: backend.clone(),
        ..SweepOptions::default()
    };
    let e = run_sweep_servers_with(dataset, &opts, &NoProgress, &|algo, s| {
        create(algo, &backend.for_server(s.unwrap()))
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("are the same server"), "{e}");
    // Nothing was written.
    assert!(!dir.path().join("results").join("same-server").exists());
}

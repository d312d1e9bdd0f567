//! A FIFO (or another special file) where annbench reads a dataset, a filter sidecar, a grid
//! file or a stored point: refused at once with its path, never opened (opening a FIFO blocks
//! until a writer comes: a sweep once hung on one until a signal, then blamed the server),
//! never replaced. And absurd counts are bounded with the option's name and range, never an
//! allocation failure.

mod files_support;
mod servers_support;

use files_support::{SIFT, annbench, is_fifo, mkfifo, stream_files, the_file};
use std::path::Path;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 1 naming `path` as a FIFO.
fn assert_fifo_refused(out: &std::process::Output, path: &Path) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{} is a FIFO", path.display())),
        "not refused by name:\n{err}"
    );
    assert!(is_fifo(path), "the FIFO was replaced");
}

#[test]
fn fifos_as_datasets_sidecars_and_grids_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // A dataset given by path.
    let fifo = dir.path().join("f-20-euclidean.hdf5");
    mkfifo(&fifo);
    let f = fifo.display().to_string();
    assert_fifo_refused(&annbench(&["datasets", "info", &f]), &fifo);
    assert_fifo_refused(
        &annbench(&[
            "run",
            "--dataset",
            &f,
            "--algorithm",
            "pgvector",
            "--results",
            &d,
        ]),
        &fifo,
    );
    // A FIFO under a bundled set's name in the data dir: neither read nor written over.
    let named = dir.path().join("sift-5k-128-euclidean.hdf5");
    mkfifo(&named);
    assert_fifo_refused(
        &annbench(&[
            "datasets",
            "info",
            "sift-5k-128-euclidean",
            "--data-dir",
            &d,
        ]),
        &named,
    );
    // A filter sidecar.
    let out = annbench(&[
        "datasets",
        "generate",
        "random-xs-20-euclidean",
        "--data-dir",
        &d,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sidecar = dir.path().join("random-xs-20-euclidean.filters.h5");
    mkfifo(&sidecar);
    assert_fifo_refused(
        &annbench(&[
            "datasets",
            "info",
            "random-xs-20-euclidean",
            "--data-dir",
            &d,
        ]),
        &sidecar,
    );
    // A grid file.
    let grid = dir.path().join("grid.yml");
    mkfifo(&grid);
    let g = grid.display().to_string();
    let out = annbench(&[
        "run",
        "--dataset",
        "random-xs-20-euclidean",
        "--data-dir",
        &d,
        "--config",
        &g,
        "--dry-run",
    ]);
    assert_fifo_refused(&out, &grid);
}

/// A stored point replaced by a FIFO: the next sweep over it stops at once, naming the file
/// (against the real PostgreSQL server).
#[test]
fn a_fifo_at_a_points_path_stops_the_sweep_at_once() {
    servers_support::postgres(); // the test server is up
    let data = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let run = || {
        annbench(&[
            "run",
            "--dataset",
            "sift-5k-128-euclidean",
            "--algorithm",
            "pgvector",
            "--build=M=8",
            "--build=ef_construction=16",
            "--query=ef_search=10",
            "--runs=1",
            "--min-time=0",
            "--schema",
            "annbench_files_fifo",
            "--data-dir",
            &data.path().display().to_string(),
            "--results",
            &results.path().display().to_string(),
        ])
    };
    let out = run();
    assert!(out.status.success(), "{}", stderr(&out));
    let points: Vec<_> = files_support::all_files(results.path());
    assert_eq!(points.len(), 1, "{points:?}");
    std::fs::remove_file(&points[0]).unwrap();
    mkfifo(&points[0]);
    assert_fifo_refused(&run(), &points[0]);
}

#[test]
fn absurd_counts_are_bounded_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_annbench"));
        cmd.args([
            "run",
            "--dataset",
            "sift-5k-128-euclidean",
            "--algorithm",
            "pgvector",
        ])
        .args(["--data-dir", &d, "--results", &d, "--dry-run"])
        .args(extra)
        .env_remove("ANNBENCH_SHARD")
        .env("RUST_BACKTRACE", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        files_support::run_within(cmd, std::time::Duration::from_secs(30))
    };
    let huge = "99999999999";
    for (extra, env, says) in [
        (vec!["--shard", "1/99999999999"], vec![], "at most 100000"),
        (
            vec![],
            vec![("ANNBENCH_SHARD", "1/99999999999")],
            "ANNBENCH_SHARD",
        ),
        (
            vec![],
            vec![
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_COUNT", huge),
            ],
            "give 1 to 100000 shards",
        ),
        (
            vec![],
            vec![("JOB_COMPLETION_INDEX", "0"), ("JOB_COMPLETIONS", huge)],
            "give 1 to 100000 shards",
        ),
        (
            vec!["--clients", huge],
            vec![],
            "--clients 99999999999: give 1 to 1024",
        ),
        (
            vec!["--count", huge],
            vec![],
            "--count 99999999999: give 1 to 100000",
        ),
        (
            vec!["--runs", huge],
            vec![],
            "--runs 99999999999: give 1 to",
        ),
        (
            vec!["--rebuilds", huge],
            vec![],
            "--rebuilds 99999999999: give 1",
        ),
    ] {
        let out = run(&extra, &env);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{extra:?} {env:?}:\n{err}");
        assert!(
            err.contains(says) && !err.contains("panicked") && !err.contains("memory allocation"),
            "{extra:?} {env:?}:\n{err}"
        );
    }
}

/// A FIFO at the live-set truth cache's path, as the runbook, or at a stream result's path:
/// `runbook check --truth` and `stream` stop at once naming it (they blocked on the cache with
/// no output), and the FIFO stays (against the real PostgreSQL server).
#[test]
fn fifos_at_the_truth_cache_runbook_and_stream_result_stop_at_once() {
    servers_support::postgres(); // the test server is up
    let dir = tempfile::tempdir().unwrap();
    let (data, rb) = stream_files(dir.path());
    let stream = |dir: &Path, data: &Path, rb: &Path| {
        files_support::stream(dir, data, rb, "annbench_files_stream_fifo")
    };
    let out = stream(dir.path(), &data, &rb);
    assert!(out.status.success(), "{}", stderr(&out));
    let cache = the_file(&data, ".stream-gt");
    let result = the_file(&dir.path().join("results"), ".json");
    // The truth cache.
    std::fs::remove_file(&cache).unwrap();
    mkfifo(&cache);
    assert_fifo_refused(&stream(dir.path(), &data, &rb), &cache);
    let check = |runbook: &Path| {
        annbench(&[
            "runbook",
            "check",
            &runbook.display().to_string(),
            "--dataset",
            SIFT,
            "--data-dir",
            &data.display().to_string(),
            "--truth",
            "10",
        ])
    };
    assert_fifo_refused(&check(&rb), &cache);
    std::fs::remove_file(&cache).unwrap();
    // The runbook.
    let fifo_rb = dir.path().join("fifo.yaml");
    mkfifo(&fifo_rb);
    assert_fifo_refused(&check(&fifo_rb), &fifo_rb);
    assert_fifo_refused(&stream(dir.path(), &data, &fifo_rb), &fifo_rb);
    // The stored result.
    std::fs::remove_file(&result).unwrap();
    mkfifo(&result);
    assert_fifo_refused(&stream(dir.path(), &data, &rb), &result);
    let export = annbench(&[
        "export",
        "--dataset",
        SIFT,
        "--streams",
        "--results",
        &dir.path().join("results").display().to_string(),
    ]);
    assert_fifo_refused(&export, &result);
}

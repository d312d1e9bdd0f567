//! The sweep with a fake backend: run order, resume after a failure, --force, atomic writes,
//! cancellation and validation before anything runs.

mod runner_fake;

use annbench::Error;
use annbench::runner::{PassOrder, SweepOptions, run_sweep_with};
use runner_fake::{Fake, Log, Recorder, Script, dataset};
use std::path::Path;
use std::sync::{Arc, Mutex};

const GRID: &str =
    "algorithm: mariadb\ngroups:\n  - build: {M: [4, 8]}\n    query: {ef_search: [10, 20]}\n";

fn options(dir: &Path) -> SweepOptions {
    let cfg = dir.join("grid.yml");
    std::fs::write(&cfg, GRID).unwrap();
    SweepOptions {
        dataset: "fake-euclidean".into(),
        algorithms: vec!["mariadb".into()],
        config_files: vec![cfg],
        count: 3,
        runs: 2,
        // One pass over the queries per timed pass; point after point (the resume tests count
        // stored points as they are measured).
        min_time: std::time::Duration::ZERO,
        order: PassOrder::Points,
        results_dir: dir.join("results"),
        ..SweepOptions::default()
    }
}

/// Run a sweep with a fresh fake; returns the outcome and the fake's call log.
fn sweep(
    opts: &SweepOptions,
    script: Script,
    progress: &Recorder,
) -> (
    annbench::Result<annbench::runner::SweepSummary>,
    Vec<String>,
) {
    let log = Arc::new(Mutex::new(Log::default()));
    let data = dataset(40, 12);
    let factory = {
        let (log, data) = (Arc::clone(&log), data.clone());
        move |_: &str| -> annbench::Result<Box<dyn annbench::backend::Backend>> {
            Ok(Box::new(Fake::new(Arc::clone(&log), script.clone(), &data)))
        }
    };
    let out = run_sweep_with(data, opts, progress, &factory);
    let calls = log.lock().unwrap().calls.clone();
    (out, calls)
}

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else {
            let meta = std::fs::metadata(&p).unwrap();
            out.push((
                p.display().to_string(),
                std::fs::read(&p).unwrap(),
                meta.modified().unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn points_run_in_config_order_with_one_load_and_one_build_per_build_point() {
    let dir = tempfile::tempdir().unwrap();
    let rec = Recorder::default();
    let (out, calls) = sweep(&options(dir.path()), Script::default(), &rec);
    let summary = out.unwrap();
    assert_eq!(summary.measured(), 4);
    assert_eq!(
        calls,
        [
            "server_info",
            "load",
            "build m=4",
            // The plan of every point, checked on the build before any is measured.
            "verify",
            "verify",
            "point ef_search=10",
            "point ef_search=20",
            "build m=8",
            "verify",
            "verify",
            "point ef_search=10",
            "point ef_search=20",
            "drop_index",
        ]
    );
    for p in &summary.points {
        assert_eq!(p.result.metrics.recall, 1.0);
        assert_eq!(p.result.passes.len(), 2);
        assert_eq!(p.result.load_seconds, Some(0.5));
        assert_eq!(p.result.build_seconds, 2.0);
        assert!(p.path.is_file());
    }
}

#[test]
fn a_killed_sweep_resumes_building_only_what_is_missing_and_keeps_stored_points() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path());
    let rec = Recorder::default();
    let fail = Script {
        fail_at_point: Some(3),
        ..Script::default()
    };
    let (out, calls) = sweep(&opts, fail, &rec);
    let err = out.unwrap_err().to_string();
    assert!(err.contains("fake server went away"), "{err}");
    // The index is dropped even on failure; two points were stored before it.
    assert_eq!(calls.last().map(String::as_str), Some("drop_index"));
    let before = snapshot(&opts.results_dir);
    let names: Vec<&String> = before.iter().map(|(p, ..)| p).collect();
    assert_eq!(names.len(), 2, "{names:?} {calls:?}");
    assert!(names.iter().all(|p| p.contains("M_4_")), "{names:?}");

    let rec = Recorder::default();
    let (out, calls) = sweep(&opts, Script::default(), &rec);
    let summary = out.unwrap();
    assert_eq!(
        calls,
        [
            "server_info",
            "load",
            "build m=8",
            "verify",
            "verify",
            "point ef_search=10",
            "point ef_search=20",
            "drop_index"
        ]
    );
    assert_eq!(summary.measured(), 2);
    assert_eq!(summary.points.len(), 4);
    assert!(
        rec.events
            .lock()
            .unwrap()
            .contains(&"skip-build m=4".to_string())
    );
    // The two stored points are byte-for-byte untouched, and no temp file is left anywhere.
    let after = snapshot(&opts.results_dir);
    assert_eq!(after.len(), 4);
    for old in &before {
        assert!(after.contains(old), "{} changed", old.0);
    }
    assert!(after.iter().all(|(p, ..)| !p.contains(".hdf5.tmp-")));

    // A third run measures nothing and builds nothing.
    let (out, calls) = sweep(&opts, Script::default(), &Recorder::default());
    assert_eq!(out.unwrap().measured(), 0);
    assert_eq!(calls, ["server_info", "load", "drop_index"]);
}

#[test]
fn force_measures_and_overwrites_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    sweep(&opts, Script::default(), &Recorder::default())
        .0
        .unwrap();
    opts.force = true;
    let (out, calls) = sweep(&opts, Script::default(), &Recorder::default());
    assert_eq!(out.unwrap().measured(), 4);
    assert_eq!(calls.iter().filter(|c| c.starts_with("build")).count(), 2);
    assert_eq!(snapshot(&opts.results_dir).len(), 4);
}

#[test]
fn cancelling_stops_after_the_current_point_and_keeps_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path());
    let rec = Recorder {
        cancel_after: Some(1),
        ..Recorder::default()
    };
    let (out, calls) = sweep(&opts, Script::default(), &rec);
    assert!(matches!(out, Err(Error::Interrupted)), "{out:?}");
    assert_eq!(calls.last().map(String::as_str), Some("drop_index"));
    assert_eq!(snapshot(&opts.results_dir).len(), 1);
}

#[test]
fn cancelling_during_a_build_stops_that_build_and_keeps_the_points_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path());
    let rec = Recorder {
        cancel_in_build: Some(2),
        ..Recorder::default()
    };
    // Builds take 2 s unless cancelled: the request must reach the running build.
    let script = Script {
        build_time: Some(std::time::Duration::from_secs(2)),
        ..Script::default()
    };
    let (out, calls) = sweep(&opts, script, &rec);
    assert!(matches!(out, Err(Error::Interrupted)), "{out:?}");
    // The runner hands the cancel request to the backend's build, which stops it.
    assert!(
        calls.contains(&"build m=8 cancelled".to_string()),
        "{calls:?}"
    );
    assert!(!calls.contains(&"build m=8".to_string()), "{calls:?}");
    // Both points of the first build are stored; a rerun resumes from there.
    assert_eq!(snapshot(&opts.results_dir).len(), 2);
    let (out, calls) = sweep(&opts, Script::default(), &Recorder::default());
    out.unwrap();
    assert!(!calls.contains(&"build m=4".to_string()), "{calls:?}");
    assert!(calls.contains(&"build m=8".to_string()), "{calls:?}");
}

#[test]
fn invalid_grids_fail_before_any_backend_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.build_overrides = vec!["ef_construction=64".into()];
    let (out, calls) = sweep(&opts, Script::default(), &Recorder::default());
    let err = out.unwrap_err().to_string();
    assert!(
        err.contains("ef_construction") && err.contains("M, engine"),
        "{err}"
    );
    assert!(calls.is_empty());

    let mut opts = options(dir.path());
    opts.clients = vec![0];
    assert!(
        sweep(&opts, Script::default(), &Recorder::default())
            .0
            .is_err()
    );
    let mut opts = options(dir.path());
    opts.count = 41; // more than the 40 train rows
    let err = sweep(&opts, Script::default(), &Recorder::default())
        .0
        .unwrap_err()
        .to_string();
    assert!(err.contains("--count 41"), "{err}");
}

/// 3072 dimensions (OpenAI's text-embedding-3-large): `pgvector` (HNSW on `vector`, at most
/// 2000) is refused before any backend is created, even listed after algorithms that take it,
/// and the message names the ones that do.
#[test]
fn a_dimension_above_an_algorithms_limit_fails_before_any_backend_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.algorithms = vec![
        "mariadb".into(),
        "pgvector_halfvec".into(),
        "pgvector".into(),
    ];
    let wide = annbench::dataset::Dataset {
        train: ndarray::Array2::from_elem((20, 3072), 0.5),
        test: ndarray::Array2::from_elem((3, 3072), 0.25),
        ..dataset(20, 3)
    };
    let created = Arc::new(Mutex::new(Vec::<String>::new()));
    let factory = {
        let created = Arc::clone(&created);
        move |name: &str| -> annbench::Result<Box<dyn annbench::backend::Backend>> {
            created.lock().unwrap().push(name.to_string());
            Err(Error::Backend("no backend in this test".into()))
        }
    };
    let err = run_sweep_with(wide, &opts, &Recorder::default(), &factory)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pgvector: its index takes at most 2000 dimensions; this dataset has 3072"),
        "{err}"
    );
    assert!(
        err.contains("pgvector_halfvec (up to 4000)") && err.contains("nothing was sent"),
        "{err}"
    );
    assert!(created.lock().unwrap().is_empty(), "{created:?}");
}

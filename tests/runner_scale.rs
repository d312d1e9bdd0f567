//! What a long sweep shows before and while it runs, with the fake backend: memory plans
//! (a warning recorded with the points, or a refusal before building), build progress in
//! percent, ground-truth progress, and `--dry-run`'s plan and estimates.

mod runner_fake;

use annbench::runner::dryrun::dry_run;
use annbench::runner::{SweepOptions, run_sweep_with};
use runner_fake::{Fake, Log, Recorder, Script, dataset};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
        runs: 1,
        data_dir: dir.join("data"),
        results_dir: dir.join("results"),
        ..SweepOptions::default()
    }
}

type Factory = Box<dyn Fn(&str) -> annbench::Result<Box<dyn annbench::backend::Backend>>>;

fn factory(script: Script, log: &Arc<Mutex<Log>>) -> Factory {
    let (log, data) = (Arc::clone(log), dataset(40, 12));
    Box::new(move |_: &str| Ok(Box::new(Fake::new(Arc::clone(&log), script.clone(), &data))))
}

fn events(r: &Recorder) -> Vec<String> {
    r.events.lock().unwrap().clone()
}

#[test]
fn a_memory_shortfall_is_warned_and_recorded_with_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path());
    let log = Arc::new(Mutex::new(Log::default()));
    let script = Script {
        memory: Some((3 << 30, 2 << 30, false)),
        ..Script::default()
    };
    let rec = Recorder::default();
    let out = run_sweep_with(dataset(40, 12), &opts, &rec, &factory(script, &log)).unwrap();
    let ev = events(&rec);
    let warned: Vec<&String> = ev.iter().filter(|e| e.contains("memory plan")).collect();
    assert_eq!(warned.len(), 2, "one warning per build: {ev:?}");
    assert!(
        warned[0].contains("3.0 GiB") && warned[0].contains("SET GLOBAL fake_cache_size"),
        "{}",
        warned[0]
    );
    assert!(ev.iter().any(|e| e == "memory fits=false"), "{ev:?}");
    assert_eq!(out.points.len(), 4);
    for p in &out.points {
        let stored = annbench::results::read_point(&p.path).unwrap();
        assert!(
            stored
                .environment
                .notices
                .iter()
                .any(|n| n.starts_with("memory plan: ")),
            "{:?}",
            stored.environment.notices
        );
    }
}

#[test]
fn an_enforced_plan_clearly_short_is_refused_before_building() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path());
    let log = Arc::new(Mutex::new(Log::default()));
    let script = Script {
        memory: Some((3 << 30, 2 << 30, true)),
        ..Script::default()
    };
    let rec = Recorder::default();
    let err = run_sweep_with(dataset(40, 12), &opts, &rec, &factory(script, &log))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("refused before building") && err.contains("fake_cache_size"),
        "{err}"
    );
    let calls = log.lock().unwrap().calls.clone();
    assert!(!calls.iter().any(|c| c.starts_with("build")), "{calls:?}");
    // Within the models' error (5%) it is only a warning: the build runs.
    let script = Script {
        memory: Some((102, 100, true)),
        ..Script::default()
    };
    let log = Arc::new(Mutex::new(Log::default()));
    run_sweep_with(dataset(40, 12), &opts, &rec, &factory(script, &log)).unwrap();
    assert!(
        log.lock()
            .unwrap()
            .calls
            .iter()
            .any(|c| c.starts_with("build"))
    );
}

#[test]
fn builds_report_progress_and_ground_truth_reports_its_work() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    std::fs::write(
        &opts.config_files[0],
        "algorithm: mariadb\ngroups:\n  - build: {M: [4]}\n    query: {ef_search: [10]}\n",
    )
    .unwrap();
    opts.runs = 1;
    let log = Arc::new(Mutex::new(Log::default()));
    let script = Script {
        build_time: Some(Duration::from_millis(1200)),
        progress: true,
        ..Script::default()
    };
    let rec = Recorder::default();
    run_sweep_with(dataset(40, 12), &opts, &rec, &factory(script, &log)).unwrap();
    let ev = events(&rec);
    let pct: Vec<f64> = ev
        .iter()
        .filter_map(|e| e.strip_prefix("progress fake build "))
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(pct.len() >= 2, "{ev:?}");
    assert!(pct.windows(2).all(|w| w[0] <= w[1]), "{pct:?}");
    assert!(pct.iter().all(|p| (0.0..=100.0).contains(p)), "{pct:?}");
    // The ground truth (40 x 12 pairs) is reported done in full.
    let gt: Vec<&String> = ev
        .iter()
        .filter(|e| e.starts_with("ground truth"))
        .collect();
    assert_eq!(
        gt.last().map(|s| s.as_str()),
        Some("ground truth 480/480"),
        "{ev:?}"
    );
}

#[test]
fn dry_run_lists_stored_points_and_estimates_from_earlier_results() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    let data = dataset(40, 12);
    std::fs::create_dir_all(&opts.data_dir).unwrap();
    annbench::dataset::save(
        &annbench::dataset::Dataset {
            ground_truth: None,
            ..data.clone()
        },
        &opts.data_dir.join("fake-euclidean.hdf5"),
    )
    .unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let script = Script {
        memory: Some((1, 2, true)),
        ..Script::default()
    };
    let f = factory(script, &log);
    let rec = Recorder::default();

    // Nothing stored: every step is listed, without estimates.
    let plan = dry_run(&opts, None, &rec, &f).unwrap();
    assert_eq!((plan.rows, plan.dimension, plan.queries), (40, 4, 12));
    let a = &plan.algorithms[0];
    assert_eq!(a.builds.len(), 2);
    assert!(a.builds.iter().all(|b| !b.skipped && b.build.is_none()));
    assert!(a.builds[0].memory.as_ref().is_some_and(|m| m.fits()));
    assert_eq!(
        plan.total().1,
        1 + 2 + 4,
        "load, builds, points without estimates"
    );
    assert!(
        plan.notes.iter().any(|n| n.contains("--calibrate")),
        "{:?}",
        plan.notes
    );
    assert!(
        log.lock()
            .unwrap()
            .calls
            .iter()
            .all(|c| c == "server_info" || !c.contains("build"))
    );

    // After a sweep, everything is stored; with --force the same grid is estimated from it.
    run_sweep_with(data, &opts, &rec, &f).unwrap();
    let plan = dry_run(&opts, None, &rec, &f).unwrap();
    assert!(plan.algorithms[0].builds.iter().all(|b| b.skipped));
    opts.force = true;
    let plan = dry_run(&opts, None, &rec, &f).unwrap();
    let b = &plan.algorithms[0].builds[0];
    // The fake's build takes 2.0 s; the same size is estimated as the same time.
    let e = b.build.as_ref().unwrap();
    assert!((e.seconds - 2.0).abs() < 1e-9, "{e:?}");
    assert_eq!(e.basis, vec!["fake-euclidean".to_string()]);
    let p = b.points[0].seconds.as_ref().unwrap();
    assert!(p.seconds > 0.0, "{p:?}");
    assert_eq!(plan.total().1, 0);
}

//! Pass scheduling with a fake backend: rounds, the minimum pass time, rebuilds, stalled
//! passes measured again, short results, extra passes for --target-ci within --max-time, and
//! bad measuring options refused before any server work.

mod runner_fake;

use annbench::runner::{PassOrder, SweepOptions, SweepSummary, run_sweep_with};
use runner_fake::{Fake, Log, Recorder, Script, dataset};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn options(dir: &Path) -> SweepOptions {
    let cfg = dir.join("grid.yml");
    std::fs::write(
        &cfg,
        "algorithm: mariadb\ngroups:\n  - build: {M: [4]}\n    query: {ef_search: [10, 20]}\n",
    )
    .unwrap();
    SweepOptions {
        dataset: "fake-euclidean".into(),
        algorithms: vec!["mariadb".into()],
        config_files: vec![cfg],
        count: 3,
        runs: 3,
        min_time: Duration::ZERO,
        results_dir: dir.join("results"),
        ..SweepOptions::default()
    }
}

fn sweep(
    opts: &SweepOptions,
    script: Script,
) -> (annbench::Result<SweepSummary>, Vec<String>, Arc<Mutex<Log>>) {
    let log = Arc::new(Mutex::new(Log::default()));
    let data = dataset(40, 12);
    let factory = {
        let (log, data) = (Arc::clone(&log), data.clone());
        move |_: &str| -> annbench::Result<Box<dyn annbench::backend::Backend>> {
            Ok(Box::new(Fake::new(Arc::clone(&log), script.clone(), &data)))
        }
    };
    let out = run_sweep_with(data, opts, &Recorder::default(), &factory);
    let calls = log.lock().unwrap().calls.clone();
    (out, calls, log)
}

#[test]
fn rounds_interleave_the_points_of_a_build() {
    let dir = tempfile::tempdir().unwrap();
    let (out, calls, _) = sweep(&options(dir.path()), Script::default());
    let summary = out.unwrap();
    // Query arguments change before every pass: two recall passes, then three rounds.
    let points: Vec<&str> = calls
        .iter()
        .filter(|c| c.starts_with("point"))
        .map(String::as_str)
        .collect();
    let (a, b) = ("point ef_search=10", "point ef_search=20");
    assert_eq!(points, [a, b, a, b, a, b, a, b]);
    for p in &summary.points {
        assert_eq!(p.result.passes.len(), 3);
        assert_eq!(p.result.metrics.passes, 3);
        assert_eq!(p.result.metrics.recall, 1.0);
        assert!(p.path.is_file());
    }
    // Point after point: each point's passes together.
    let mut opts = options(dir.path());
    opts.order = PassOrder::Points;
    opts.force = true;
    let (_, calls, _) = sweep(&opts, Script::default());
    let points: Vec<&str> = calls
        .iter()
        .filter(|c| c.starts_with("point"))
        .map(String::as_str)
        .collect();
    assert_eq!(points, [a, b]);
}

#[test]
fn a_timed_pass_lasts_the_minimum_time_and_recall_uses_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.min_time = Duration::from_millis(60);
    opts.runs = 2;
    opts.clients = vec![2];
    let script = Script {
        latency: Some(Duration::from_millis(1)),
        ..Script::default()
    };
    let (out, _, log) = sweep(&opts, script);
    let summary = out.unwrap();
    let mut timed = 0;
    for p in &summary.points {
        for pass in &p.result.passes {
            assert!(pass.wall_seconds >= 0.06, "{pass:?}");
            // 12 queries take at least 6 ms per client: the pass cycled through them.
            assert!(pass.queries > 12, "{pass:?}");
            timed += pass.queries;
        }
        assert_eq!(p.result.metrics.recall, 1.0);
        assert_eq!(p.result.latencies.len(), 12);
    }
    // Every search the fake answered was a recall-pass query (12 per point) or a timed one.
    let searched: usize = log.lock().unwrap().searches.iter().sum();
    assert_eq!(searched, timed + 12 * summary.points.len());
}

#[test]
fn rebuilds_build_every_index_again_and_record_each_build() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.rebuilds = 2;
    opts.runs = 2;
    let (out, calls, _) = sweep(&opts, Script::default());
    let summary = out.unwrap();
    assert_eq!(calls.iter().filter(|c| *c == "build m=4").count(), 2);
    for p in &summary.points {
        let builds: Vec<usize> = p.result.passes.iter().map(|x| x.build).collect();
        assert_eq!(builds, [0, 0, 1, 1]);
        assert_eq!(p.result.metrics.builds.len(), 2);
        assert!(p.result.metrics.builds.iter().all(|b| b.recall == 1.0));
        assert!(p.result.metrics.qps_interval().is_some());
    }
}

#[test]
fn a_stalled_pass_is_flagged_measured_again_and_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.order = PassOrder::Points;
    opts.max_time = Some(Duration::from_secs(30));
    // Only the stall may disturb a pass here, whatever else runs on the machine.
    opts.watch_interference = false;
    // Searcher 0 answers 12 recall queries, then 12 per timed pass: search 30 is in the
    // second timed pass of the first point. Other queries take 2 ms: the stalled pass is over
    // 20x slower than the others.
    let script = Script {
        latency: Some(Duration::from_millis(2)),
        stall: Some((30, Duration::from_millis(600))),
        ..Script::default()
    };
    let (out, _, _) = sweep(&opts, script);
    let summary = out.unwrap();
    let first = &summary.points[0].result;
    assert!(first.passes[1].stalled, "{:?}", first.passes);
    assert!(!first.passes[1].used);
    // Measured again: three undisturbed passes behind the figure.
    assert!(first.passes.len() >= 4 && first.metrics.passes >= 3);
    assert!(
        first
            .environment
            .notices
            .iter()
            .any(|n| n.contains("stalled")),
        "{:?}",
        first.environment.notices
    );
    // Noise is said once, at the end of the run (runner::noise), not as a warning per point.
    assert!(
        !summary.warnings.iter().any(|w| w.contains("stalled")),
        "{:?}",
        summary.warnings
    );
}

#[test]
fn fewer_than_k_ids_are_counted_and_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script {
        short_by: 1,
        ..Script::default()
    };
    let (out, _, _) = sweep(&options(dir.path()), script);
    let summary = out.unwrap();
    let p = &summary.points[0].result;
    assert_eq!(p.metrics.short_results, 12);
    assert!((p.metrics.recall - 2.0 / 3.0).abs() < 1e-12);
    assert!(
        p.environment
            .notices
            .iter()
            .any(|n| n.contains("fewer than k=3 ids for 12 of 12 queries")),
        "{:?}",
        p.environment.notices
    );
}

#[test]
fn target_ci_adds_passes_until_max_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.runs = 2;
    opts.target_ci = Some(1e-9); // never met
    opts.max_time = Some(Duration::from_millis(100));
    let script = Script {
        latency: Some(Duration::from_millis(1)),
        ..Script::default()
    };
    let (out, _, _) = sweep(&opts, script);
    for p in &out.unwrap().points {
        let passes = &p.result.passes;
        assert!(passes.len() > 2, "{}", passes.len());
        // Each extra pass started before the point had measured for 100 ms.
        let before_last: f64 = passes[..passes.len() - 1]
            .iter()
            .map(|x| x.wall_seconds)
            .sum();
        assert!(before_last < 0.1, "{before_last}");
    }
}

#[test]
fn bad_measuring_options_are_refused_before_any_server_work() {
    let dir = tempfile::tempdir().unwrap();
    for (edit, needle) in [
        (
            (|o: &mut SweepOptions| o.runs = 1_000_000_000) as fn(&mut SweepOptions),
            "--runs 1000000000",
        ),
        (|o| o.runs = 0, "--runs 0"),
        (|o| o.rebuilds = 0, "--rebuilds"),
        (|o| o.target_ci = Some(2.0), "--target-ci"),
        (
            |o| o.min_time = Duration::from_secs(3 * 24 * 3600),
            "--min-time",
        ),
    ] {
        let mut opts = options(dir.path());
        edit(&mut opts);
        let (out, calls, _) = sweep(&opts, Script::default());
        let err = out.unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
        assert!(calls.is_empty(), "{calls:?}");
    }
}

/// `--runs` in the billions once tried to allocate memory for every latency: now refused
/// before the backend is touched.
#[test]
fn runs_beyond_the_pass_limit_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.runs = 1_000_000_000;
    let (out, calls, _) = sweep(&opts, Script::default());
    let e = out.unwrap_err().to_string();
    assert!(e.contains("--runs 1000000000: give 1 to 1000"), "{e}");
    assert!(calls.is_empty(), "{calls:?}");
}

//! Many clients with a fake backend: each client answers its contiguous share, recall is the
//! same as with one client, latencies of all clients are merged exactly, wall time and client
//! CPU are recorded; bad ids from a backend are caught.

mod runner_fake;

use annbench::runner::{SweepOptions, SweepSummary, run_sweep_with};
use runner_fake::{Fake, Log, Recorder, Script, dataset};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn options(dir: &Path, clients: Vec<usize>) -> SweepOptions {
    let cfg = dir.join("grid.yml");
    std::fs::write(
        &cfg,
        "algorithm: mariadb\ngroups:\n  - build: {M: 8}\n    query: {ef_search: 10}\n",
    )
    .unwrap();
    SweepOptions {
        dataset: "fake-euclidean".into(),
        algorithms: vec!["mariadb".into()],
        config_files: vec![cfg],
        count: 3,
        runs: 2,
        min_time: Duration::ZERO,
        clients,
        results_dir: dir.join("results"),
        ..SweepOptions::default()
    }
}

fn sweep(opts: &SweepOptions, script: Script) -> (annbench::Result<SweepSummary>, Arc<Mutex<Log>>) {
    let log = Arc::new(Mutex::new(Log::default()));
    let data = dataset(40, 12);
    let factory = {
        let (log, data) = (Arc::clone(&log), data.clone());
        move |_: &str| -> annbench::Result<Box<dyn annbench::backend::Backend>> {
            Ok(Box::new(Fake::new(Arc::clone(&log), script.clone(), &data)))
        }
    };
    (
        run_sweep_with(data, opts, &Recorder::default(), &factory),
        log,
    )
}

#[test]
fn one_and_three_clients_give_the_same_recall_and_every_query_runs_once_per_pass() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script {
        wrong_queries: vec![2, 7],
        latency: Some(Duration::from_micros(200)),
        ..Script::default()
    };
    let (out, log) = sweep(&options(dir.path(), vec![1, 3]), script);
    let summary = out.unwrap();
    assert_eq!(summary.points.len(), 2);
    let (one, three) = (&summary.points[0].result, &summary.points[1].result);
    assert_eq!((one.clients, three.clients), (1, 3));
    // 2 of 12 queries answered with the farthest rows: 10 of 12 queries fully right.
    assert!(
        (one.metrics.recall - 10.0 / 12.0).abs() < 1e-12,
        "{}",
        one.metrics.recall
    );
    assert_eq!(one.metrics.recall, three.metrics.recall);
    assert_eq!(one.neighbors, three.neighbors);

    // Searchers 0..3 of the build: searcher 0 ran the 1-client point (12 queries x 3 passes)
    // and its 4-query share of the 3-client point; searchers 1 and 2 their 4-query shares.
    let searches = log.lock().unwrap().searches.clone();
    assert_eq!(searches, [12 * 3 + 4 * 3, 4 * 3, 4 * 3]);

    for p in [one, three] {
        assert_eq!(p.passes.len(), 2);
        for pass in &p.passes {
            assert!(pass.wall_seconds > 0.0 && pass.queries == 12);
            assert!(pass.client_cpu_seconds.is_some_and(|c| c >= 0.0));
        }
        // Every client's latencies are in the record of each query's first run (each search
        // slept 200 us), and the point's percentiles are those of its median pass, over all
        // clients' queries.
        assert_eq!(p.latencies.len(), 12);
        assert!(
            p.latencies.iter().all(|&l| l >= 200e-6),
            "{:?}",
            p.latencies
        );
        let slower = p
            .passes
            .iter()
            .min_by(|a, b| a.qps().total_cmp(&b.qps()))
            .unwrap();
        let lat = slower.latency.unwrap();
        assert!(lat.p50 >= 200e-6 && lat.max >= lat.p99);
        assert_eq!(
            (
                p.metrics.latency_p50,
                p.metrics.latency_p99,
                p.metrics.latency_mean
            ),
            (lat.p50, lat.p99, lat.mean)
        );
        // QPS is measured from wall time: the median of the passes' queries / wall seconds
        // (two passes: their mean), and the best pass is kept too.
        let q: Vec<f64> = p.passes.iter().map(|x| 12.0 / x.wall_seconds).collect();
        assert!((p.metrics.qps - (q[0] + q[1]) / 2.0).abs() < 1e-9 * p.metrics.qps);
        assert_eq!(p.metrics.qps_best, q[0].max(q[1]));
        assert_eq!(p.metrics.qps_passes.len(), 2);
        let ci = p.metrics.qps_interval().unwrap();
        assert_eq!((ci.low, ci.high), (q[0].min(q[1]), q[0].max(q[1])));
    }
}

#[test]
fn an_id_outside_the_table_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script {
        bad_id: Some(4000),
        ..Script::default()
    };
    let err = sweep(&options(dir.path(), vec![1]), script)
        .0
        .unwrap_err()
        .to_string();
    assert!(err.contains("id 4000") && err.contains("0..40"), "{err}");
}

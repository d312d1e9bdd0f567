//! The result store: write then read back equal, atomic writes, and reading ann-benchmarks'
//! own result files (written here the way h5py writes them).

use annbench::Metric;
use annbench::backend::BuildPhase;
use annbench::metrics::LatencySummary;
use annbench::params::Params;
use annbench::results::{
    self, BuildRun, Environment, Flag, Interference, Interleave, Pass, PassServerCost,
    PointMetrics, PointResult, ServerCost,
};
use hdf5::types::VarLenUnicode;
use ndarray::array;
use serde_json::json;
use std::path::Path;

fn params(v: serde_json::Value) -> Params {
    serde_json::from_value(v).unwrap()
}

fn sample_point() -> PointResult {
    PointResult {
        dataset: "tiny-euclidean".into(),
        distance: Metric::Euclidean,
        count: 2,
        algorithm: "pgvector".into(),
        build_args: params(json!({"ef_construction": 64, "M": 16})),
        query_args: params(json!({"ef_search": 40})),
        clients: 3,
        label: Some("pg17".into()),
        dataset_fingerprint: Some("0123456789abcdef0123456789abcdef".into()),
        load_seconds: Some(1.25),
        build_seconds: 3.5,
        index_size_bytes: Some(123_456),
        table_size_bytes: Some(999),
        build_phases: vec![BuildPhase {
            name: "loading tuples".into(),
            seconds: 2.0,
        }],
        neighbors: array![[0i64, 1], [2, -1]],
        distances: array![[0.5f32, 1.5], [0.25, f32::INFINITY]],
        latencies: vec![0.001, 0.0025],
        passes: vec![
            Pass {
                wall_seconds: 0.01,
                queries: 2,
                client_cpu_seconds: Some(0.004),
                latency: Some(LatencySummary {
                    mean: 0.005,
                    p50: 0.005,
                    p95: 0.006,
                    p99: 0.006,
                    p999: 0.006,
                    max: 0.006,
                }),
                interference: Some(Interference {
                    seconds: 0.011,
                    cores: 2,
                    other_cpu_seconds: Some(0.01),
                    steal_seconds: 0.0,
                    load_average: 3.2,
                    cpu_probe_us: Some(181.5),
                    heavy: true,
                }),
                used: false,
                server: Some(PassServerCost {
                    cpu_user_seconds: Some(0.003),
                    cpu_system_seconds: Some(0.001),
                    voluntary_switches: Some(4),
                    involuntary_switches: Some(1),
                    statements: Some(2),
                    exec_seconds: Some(0.002),
                    buffer_hits: Some(20),
                    buffer_reads: None,
                    process_read_bytes: Some(16384),
                    process_write_bytes: Some(0),
                    device_reads: Some(2),
                    device_read_bytes: Some(16384),
                    device_writes: Some(1),
                    device_write_bytes: Some(4096),
                }),
                ..Pass::default()
            },
            Pass {
                wall_seconds: 0.008,
                queries: 2,
                client_cpu_seconds: None,
                build: 1,
                stalled: true,
                round: Some(3),
                ..Pass::default()
            },
        ],
        metrics: PointMetrics {
            recall: 0.75,
            epsilon_recall: 0.75,
            qps: 250.0,
            qps_ci_low: Some(200.0),
            qps_ci_high: Some(250.0),
            qps_ci_level: Some(0.5),
            qps_best: 250.0,
            qps_cv: Some(0.157),
            passes: 1,
            qps_passes: vec![200.0, 250.0],
            latency_mean: 0.00175,
            latency_p50: 0.00175,
            latency_p95: 0.002425,
            latency_p99: 0.002485,
            latency_p999: 0.0024985,
            short_results: 1,
            mean_rows: Some(9.5),
            plan: Some("vector index (Limit)".into()),
            flags: vec![Flag::Interference, Flag::Stalled],
            builds: vec![BuildRun {
                build_seconds: 3.5,
                index_size_bytes: Some(123_456),
                recall: 0.75,
                epsilon_recall: 0.75,
                qps: 250.0,
            }],
            server: Some(ServerCost {
                cpu_per_query: Some(0.002),
                cpu_source: Some("/proc: mariadbd pid 1, all threads".into()),
                notes: vec!["performance_schema is off".into()],
                build_cpu_seconds: Some(7.0),
                ..ServerCost::default()
            }),
            recall_rule: Some(annbench::metrics::KNN_RULE.into()),
            interleave: Some(Interleave {
                run: "20261201T180000Z-3f2a".into(),
                servers: vec!["pg17".into(), "pg18".into()],
                seed: 7,
            }),
        },
        environment: Environment {
            annbench_version: "0.1.0".into(),
            server_version: "PostgreSQL 17".into(),
            server_settings: [("shared_buffers".to_string(), "128MB".to_string())].into(),
            cpu_model: "cpu".into(),
            cpu_cores: 2,
            ram_bytes: 1 << 30,
            finished_at: "2026-11-29T22:00:00Z".into(),
            started_at: Some("2026-11-29T21:00:00Z".into()),
            notices: vec!["a notice".into()],
            command: "annbench run --dataset x --mariadb mysql://u:***@h/db".into(),
            hostname: "node-1".into(),
            shard: Some(annbench::shard::ShardInfo {
                index: 2,
                count: 3,
                plan: "0123456789ab".into(),
                plan_points: 12,
                source: "SLURM_ARRAY_TASK_ID=1, SLURM_ARRAY_TASK_COUNT=3".into(),
            }),
        },
    }
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    out
}

#[test]
fn a_point_reads_back_equal_and_no_temp_file_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let point = sample_point();
    let path = results::write_point(dir.path(), &point).unwrap();
    assert!(
        path.starts_with(dir.path().join("tiny-euclidean/2/pgvector")),
        "{path:?}"
    );
    let back = results::read_point(&path).unwrap();
    assert_eq!(format!("{back:?}"), format!("{point:?}"));
    // Overwrite (--force) also goes through a temp file and leaves only the point.
    results::write_point(dir.path(), &point).unwrap();
    assert_eq!(
        files_under(dir.path()),
        [path.file_name().unwrap().to_string_lossy()]
    );

    let loaded = results::load_points(dir.path(), "tiny-euclidean", 2, dir.path()).unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].metrics, point.metrics);
}

/// A point scored by an earlier annbench (no `recall_rule`: an absolute 1e-3 tolerance) is
/// flagged `tolerance` where a returned distance is small enough for the rules to differ.
#[test]
fn points_scored_with_the_absolute_tolerance_on_small_distances_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let mut old = sample_point();
    old.metrics.recall_rule = None;
    old.metrics.flags.clear();
    // Distances of 0.25 and more: both rules count the same answers.
    let path = results::write_point(dir.path(), &old).unwrap();
    assert!(results::read_point(&path).unwrap().metrics.flags.is_empty());
    // A returned distance of 0.05: the old rule may have counted an answer this one does not.
    old.distances[[0, 0]] = 0.05;
    results::write_point(dir.path(), &old).unwrap();
    let back = results::read_point(&path).unwrap();
    assert_eq!(back.metrics.flags, [Flag::Tolerance]);
    assert!(back.old_recall_rule());
    // Scored by the current rule: never flagged.
    let mut new = old.clone();
    new.metrics.recall_rule = Some(annbench::metrics::KNN_RULE.into());
    results::write_point(dir.path(), &new).unwrap();
    assert!(results::read_point(&path).unwrap().metrics.flags.is_empty());
}

#[test]
fn format_1_and_2_files_read_with_the_median_and_the_best_pass_apart() {
    // Files as annbench formats 1 and 2 (2 added the dataset fingerprint) wrote them: `qps` was
    // the best pass, passes had no latency or interference, metrics had no interval.
    for format in [1, 2] {
        old_format_file_reads_as_median(format);
    }
}

fn old_format_file_reads_as_median(format: u32) {
    let dir = tempfile::tempdir().unwrap();
    let path = results::write_point(dir.path(), &sample_point()).unwrap();
    let f = hdf5::File::open_rw(&path).unwrap();
    let text = f
        .attr("annbench")
        .unwrap()
        .read_scalar::<VarLenUnicode>()
        .unwrap()
        .as_str()
        .to_string();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["format"] = json!(format);
    v["passes"] = json!([
        {"wall_seconds": 0.01, "queries": 2, "client_cpu_seconds": 0.004},
        {"wall_seconds": 0.008, "queries": 2, "client_cpu_seconds": null},
        {"wall_seconds": 0.0087, "queries": 2, "client_cpu_seconds": null}
    ]);
    let m = v["metrics"].as_object_mut().unwrap();
    m.retain(|k, _| {
        [
            "recall",
            "epsilon_recall",
            "qps",
            "qps_passes",
            "latency_mean",
            "latency_p50",
            "latency_p95",
            "latency_p99",
            "latency_p999",
        ]
        .contains(&k.as_str())
    });
    m.insert("qps".into(), json!(250.0));
    m.insert("qps_passes".into(), json!([200.0, 250.0, 230.0]));
    f.delete_attr("annbench").unwrap();
    str_attr(&f, "annbench", &v.to_string());
    f.close().unwrap();
    let back = results::read_point(&path).unwrap();
    let m = &back.metrics;
    assert_eq!((m.qps, m.qps_best, m.passes), (230.0, 250.0, 3));
    // 3 passes: [min, max] at 75%.
    assert_eq!(
        (m.qps_ci_low, m.qps_ci_high, m.qps_ci_level),
        (Some(200.0), Some(250.0), Some(0.75))
    );
    assert!(m.flags.is_empty() && back.passes.iter().all(|p| p.used && p.build == 0));
}

#[test]
fn ann_benchmarks_compatible_attributes_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = results::write_point(dir.path(), &sample_point()).unwrap();
    let f = hdf5::File::open(&path).unwrap();
    let s = |n: &str| {
        f.attr(n)
            .unwrap()
            .read_scalar::<VarLenUnicode>()
            .unwrap()
            .as_str()
            .to_string()
    };
    assert_eq!(s("algo"), "pgvector");
    assert_eq!(s("distance"), "euclidean");
    assert_eq!(
        s("name"),
        "pgvector(ef_construction=64, m=16, ef_search=40)"
    );
    let index_kb = f.attr("index_size").unwrap().read_scalar::<f64>().unwrap();
    assert_eq!(index_kb, 123_456.0 / 1024.0);
    // Best pass: 0.008 s for 2 queries -> their QPS (1 / best_search_time) is our measured 250.
    let bst = f
        .attr("best_search_time")
        .unwrap()
        .read_scalar::<f64>()
        .unwrap();
    assert!((1.0 / bst - 250.0).abs() < 1e-9);
    assert!(!f.attr("batch_mode").unwrap().read_scalar::<bool>().unwrap());
    assert_eq!(
        f.attr("run_count").unwrap().read_scalar::<i64>().unwrap(),
        2
    );
    // The median figure and its spread as plain attributes.
    let num = |n: &str| f.attr(n).unwrap().read_scalar::<f64>().unwrap();
    assert_eq!(
        (num("qps"), num("qps_ci_low"), num("qps_ci_high")),
        (250.0, 200.0, 250.0)
    );
    assert_eq!(num("qps_cv"), 0.157);
    assert_eq!(f.attr("passes").unwrap().read_scalar::<i64>().unwrap(), 1);
    assert_eq!(f.dataset("neighbors").unwrap().shape(), [2, 2]);
}

fn str_attr(f: &hdf5::File, name: &str, v: &str) {
    let v: VarLenUnicode = v.parse().unwrap();
    f.new_attr::<VarLenUnicode>()
        .create(name)
        .unwrap()
        .write_scalar(&v)
        .unwrap();
}

#[test]
fn ann_benchmarks_results_are_read_with_metrics_from_ground_truth() {
    let dir = tempfile::tempdir().unwrap();
    // The dataset with (hand-made, exact) ground truth: 2 queries, 3 true neighbours each.
    let data = annbench::dataset::Dataset {
        name: "toy-euclidean".into(),
        metric: Metric::Euclidean,
        train: array![
            [1.0f32, 0.0],
            [2.0, 0.0],
            [3.0, 0.0],
            [101.0, 100.0],
            [100.0, 101.5],
            [104.0, 100.0]
        ],
        test: array![[0.0f32, 0.0], [100.0, 100.0]],
        ground_truth: Some(annbench::dataset::GroundTruth {
            neighbors: array![[0i32, 1, 2], [3, 4, 5]],
            distances: array![[1.0f32, 2.0, 3.0], [1.0, 1.5, 4.0]],
        }),
    };
    annbench::dataset::save(&data, &dir.path().join("toy-euclidean.hdf5")).unwrap();

    // A result as ann-benchmarks' runner stores it: h5py attrs, f32 times, i32 neighbours.
    let res_dir = dir.path().join("results/toy-euclidean/2/hnswlib");
    std::fs::create_dir_all(&res_dir).unwrap();
    let f = hdf5::File::create(res_dir.join("M_16_ef_10.hdf5")).unwrap();
    str_attr(&f, "algo", "hnswlib");
    str_attr(&f, "dataset", "toy-euclidean");
    str_attr(&f, "name", "hnswlib(M=16, ef=10)");
    str_attr(&f, "distance", "euclidean");
    f.new_attr::<i64>()
        .create("count")
        .unwrap()
        .write_scalar(&2i64)
        .unwrap();
    f.new_attr::<i64>()
        .create("run_count")
        .unwrap()
        .write_scalar(&5i64)
        .unwrap();
    f.new_attr::<f64>()
        .create("build_time")
        .unwrap()
        .write_scalar(&7.5f64)
        .unwrap();
    f.new_attr::<f64>()
        .create("index_size")
        .unwrap()
        .write_scalar(&2.0f64)
        .unwrap();
    f.new_attr::<f64>()
        .create("best_search_time")
        .unwrap()
        .write_scalar(&0.002f64)
        .unwrap();
    f.new_attr::<f64>()
        .create("candidates")
        .unwrap()
        .write_scalar(&2.0f64)
        .unwrap();
    f.new_attr::<bool>()
        .create("batch_mode")
        .unwrap()
        .write_scalar(&false)
        .unwrap();
    f.new_attr::<bool>()
        .create("expect_extra")
        .unwrap()
        .write_scalar(&false)
        .unwrap();
    f.new_dataset_builder()
        .with_data(&[0.001f32, 0.003])
        .create("times")
        .unwrap();
    f.new_dataset_builder()
        .with_data(&array![[0i32, 1], [3, 9]])
        .create("neighbors")
        .unwrap();
    // Query 0 finds both; query 1 finds one (9.0 > 1.5 + 1e-3) -> recall 0.75.
    f.new_dataset_builder()
        .with_data(&array![[1.0f32, 2.0], [1.0, 9.0]])
        .create("distances")
        .unwrap();
    f.close().unwrap();

    let points =
        results::load_points(&dir.path().join("results"), "toy-euclidean", 2, dir.path()).unwrap();
    assert_eq!(points.len(), 1);
    let p = &points[0];
    assert_eq!(p.algorithm, "hnswlib");
    assert_eq!(p.metrics.recall, 0.75);
    assert!((p.metrics.qps - 500.0).abs() < 1e-9);
    assert_eq!(p.index_size_bytes, Some(2048));
    assert_eq!(p.load_seconds, None);
    assert_eq!(p.neighbors[[1, 1]], 9);
    assert!(
        p.environment
            .notices
            .iter()
            .any(|n| n.contains("client-side"))
    );

    // Without the dataset the error names the result file and the fix.
    let err = results::load_points(
        &dir.path().join("results"),
        "toy-euclidean",
        2,
        &dir.path().join("nowhere"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("M_16_ef_10.hdf5") && err.contains("--data-dir"),
        "{err}"
    );
}

#[test]
fn a_corrupt_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let algo = dir.path().join("d/10/mariadb");
    std::fs::create_dir_all(&algo).unwrap();
    std::fs::write(algo.join("broken.hdf5"), b"not hdf5").unwrap();
    // In-flight temp files (hidden) are ignored.
    std::fs::write(algo.join(".x.hdf5.tmp-1"), b"partial").unwrap();
    let err = results::load_points(dir.path(), "d", 10, dir.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("broken.hdf5"), "{err}");
    assert!(results::read_point(&algo.join("broken.hdf5")).is_err());
}

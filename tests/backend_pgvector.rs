//! pgvector HNSW backends (vector and halfvec index) against a real server
//! (ANNBENCH_POSTGRES_URL or scripts/databases.sh). They fail, never skip, without a server.

mod backend_util;

use annbench::Metric;
use annbench::backend::{Backend, BackendOptions, TableSpec, create};
use annbench::params::Params;
use backend_util::{HIGH_EF_RECALL, assert_bad_train_is_named, data, mean_recall, name};
use serde_json::json;

fn backend(algorithm: &str) -> Box<dyn Backend> {
    let url = annbench::connect::postgres_url(None)
        .unwrap_or_else(|e| panic!("pgvector tests need a server: {e}"));
    let opts = BackendOptions {
        postgres_url: Some(url.expose().to_string()),
        ..Default::default()
    };
    create(algorithm, &opts).unwrap_or_else(|e| panic!("{e}"))
}

fn params(v: serde_json::Value) -> Params {
    v.as_object().cloned().unwrap_or_default()
}

fn spec(test: &str, metric: Metric) -> TableSpec {
    TableSpec {
        dataset: name(test),
        metric,
        dimension: 128,
    }
}

/// Build, check the plan, and require recall at ef_search's maximum well above
/// [`HIGH_EF_RECALL`]: HNSW is approximate, so exact ids are not promised.
fn high_ef_search(algorithm: &str, metric: Metric, test: &str) {
    let (train, queries) = data(1500, 50);
    let mut b = backend(algorithm);
    let load = b.load(&spec(test, metric), train.view()).unwrap();
    assert_eq!(load.rows, 1500);
    // At least the vector payload: 128 values of 4 bytes, or of 2 in a halfvec column.
    let value_bytes = if algorithm == "pgvector_halfvec_column" {
        2
    } else {
        4
    };
    assert!(
        load.table_size_bytes.unwrap_or(0) > 1500 * 128 * value_bytes,
        "{load:?}"
    );
    let built = b
        .build(&params(json!({"M": 16, "ef_construction": 64})))
        .unwrap();
    assert!(
        built.seconds > 0.0 && built.index_size_bytes > 0,
        "{built:?}"
    );
    let qa = params(json!({"ef_search": 1000}));
    b.verify_index_used(queries.row(0).as_slice().unwrap(), 10, &qa)
        .unwrap();
    let mut s = b.searcher().unwrap();
    s.set_query_args(&qa).unwrap();
    let mut ids = Vec::new();
    let answers: Vec<Vec<i64>> = queries
        .outer_iter()
        .map(|q| {
            s.search(q.as_slice().unwrap(), 10, &mut ids).unwrap();
            ids.clone()
        })
        .collect();
    assert!(answers.iter().all(|a| a.len() == 10), "{answers:?}");
    let r = mean_recall(metric, train.view(), queries.view(), &answers, 10);
    assert!(r >= HIGH_EF_RECALL, "mean recall {r} at ef_search=1000");
}

#[test]
fn vector_euclidean_recall_is_high_at_max_ef_search() {
    high_ef_search("pgvector", Metric::Euclidean, "pg-l2");
}

#[test]
fn vector_angular_recall_is_high_at_max_ef_search() {
    high_ef_search("pgvector", Metric::Angular, "pg-cos");
}

#[test]
fn halfvec_index_euclidean_recall_is_high_at_max_ef_search() {
    // SIFT values are small integers: exact in float16, so halfvec loses nothing here.
    high_ef_search("pgvector_halfvec", Metric::Euclidean, "pg-half-l2");
}

#[test]
fn halfvec_index_angular_recall_is_high_at_max_ef_search() {
    high_ef_search("pgvector_halfvec", Metric::Angular, "pg-half-cos");
}

#[test]
fn verify_fails_without_the_index_and_bad_input_is_named() {
    let (train, queries) = data(300, 1);
    let mut b = backend("pgvector");
    b.load(&spec("pg-verify", Metric::Euclidean), train.view())
        .unwrap();
    b.build(&params(json!({"M": 8, "ef_construction": 32})))
        .unwrap();
    let q = queries.row(0).to_vec();
    let qa = params(json!({"ef_search": 10}));
    b.verify_index_used(&q, 10, &qa).unwrap();
    b.drop_index().unwrap();
    let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
    assert!(
        e.contains("does not use the HNSW index") && e.contains("Seq Scan"),
        "{e}"
    );

    let e = b
        .build(&params(json!({"M": 16, "ef_construction": 16})))
        .unwrap_err()
        .to_string();
    assert!(e.contains("2*M = 32"), "{e}");
    let mut s = b.searcher().unwrap();
    let e = s
        .set_query_args(&params(json!({"ef_search": 0})))
        .unwrap_err()
        .to_string();
    assert!(e.contains("ef_search=0"), "{e}");

    assert_bad_train_is_named(
        b.as_mut(),
        &spec("pg-verify", Metric::Euclidean),
        &train,
        (5, 9),
        f32::INFINITY,
    );
}

#[test]
fn halfvec_column_euclidean_recall_is_high_at_max_ef_search() {
    high_ef_search("pgvector_halfvec_column", Metric::Euclidean, "pg-hcol-l2");
}

#[test]
fn halfvec_column_angular_recall_is_high_at_max_ef_search() {
    high_ef_search("pgvector_halfvec_column", Metric::Angular, "pg-hcol-cos");
}

#[test]
fn a_halfvec_column_table_is_its_own_half_size_table_and_refuses_float16_overflow() {
    let (train, _) = data(1000, 0);
    let spec = spec("pg-hcol-size", Metric::Euclidean);
    let full = backend("pgvector").load(&spec, train.view()).unwrap();
    let mut hb = backend("pgvector_halfvec_column");
    let half = hb.load(&spec, train.view()).unwrap();
    // Not the float32 table: a halfvec table of its own, 2 bytes per value.
    let (f, h) = (
        full.table_size_bytes.unwrap(),
        half.table_size_bytes.unwrap(),
    );
    assert!(h * 4 < f * 3, "halfvec table {h} bytes vs vector table {f}");
    let mut big = train.clone();
    big[[17, 2]] = 70000.0;
    let e = hb.load(&spec, big.view()).unwrap_err().to_string();
    assert!(
        e.contains("row 17") && e.contains("70000") && e.contains("float16"),
        "{e}"
    );
}

#[test]
fn a_table_with_the_same_data_is_reused_by_both_variants() {
    let (train, _) = data(400, 0);
    let spec = spec("pg-reuse", Metric::Euclidean);
    let mut changed = train.clone();
    changed[[3, 3]] += 1.0;
    let mut b = backend("pgvector");
    b.load(&spec, changed.view()).unwrap();
    let first = b.load(&spec, train.view()).unwrap();
    assert!(!first.reused && first.seconds > 0.0, "{first:?}");
    let mut half = backend("pgvector_halfvec");
    let again = half.load(&spec, train.view()).unwrap();
    assert!(again.reused, "{again:?}");
    assert_eq!((again.seconds, again.rows), (first.seconds, 400));
}

#[test]
fn build_records_phases_and_the_memory_notice() {
    let (train, _) = data(3000, 0);
    let mut b = backend("pgvector");
    b.load(&spec("pg-notice", Metric::Euclidean), train.view())
        .unwrap();
    let built = b
        .build(&params(
            json!({"M": 16, "ef_construction": 64, "maintenance_work_mem": "1MB"}),
        ))
        .unwrap();
    assert!(
        built
            .notices
            .iter()
            .any(|n| n.contains("maintenance_work_mem")),
        "{built:?}"
    );
    assert!(!built.phases.is_empty(), "{built:?}");
    let total: f64 = built.phases.iter().map(|p| p.seconds).sum();
    assert!(total <= built.seconds + 1e-6, "{built:?}");
    let info = b.server_info().unwrap();
    assert!(info.version.contains("pgvector"), "{info:?}");
    assert!(
        info.settings.contains_key("maintenance_work_mem"),
        "{info:?}"
    );
}

#[test]
fn a_killed_session_is_a_server_error_not_a_panic() {
    let (train, queries) = data(200, 1);
    let mut b = backend("pgvector");
    b.load(&spec("pg-killed", Metric::Euclidean), train.view())
        .unwrap();
    b.build(&params(json!({"M": 4, "ef_construction": 16})))
        .unwrap();
    let mut s = b.searcher().unwrap();
    let q = queries.row(0).to_vec();
    let mut ids = Vec::new();
    s.search(&q, 5, &mut ids).unwrap();
    // Terminate the searcher's backend process, found by its last query text.
    let url = annbench::connect::postgres_url(None).unwrap();
    let mut admin = annbench::connect::connect_postgres(&url).unwrap();
    let killed = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE query LIKE 'SELECT id FROM annbench.vec_test_pg_killed %' \
             AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap();
    assert_eq!(killed.len(), 1);
    // pg_terminate_backend only signals the process: search until the session is gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let e = loop {
        match s.search(&q, 5, &mut ids) {
            Err(e) => break e,
            Ok(()) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            Ok(()) => panic!("the terminated session still answered after 30 s"),
        }
    };
    assert!(matches!(e, annbench::Error::Server(_)), "{e:?}");
    assert!(e.to_string().contains("connection lost"), "{e}");
}

/// A 1 ms statement_timeout, set right before CREATE INDEX, always fires inside the build,
/// on any machine; the error names the limit and its fix, and the table stays usable.
#[test]
fn a_build_over_the_timeout_is_cancelled_with_a_clear_error() {
    let (train, queries) = data(3000, 1);
    let url = annbench::connect::postgres_url(None).unwrap();
    let opts = BackendOptions {
        postgres_url: Some(url.expose().to_string()),
        build_timeout: Some(std::time::Duration::from_millis(1)),
        ..Default::default()
    };
    let spec = spec("pg-timeout", Metric::Euclidean);
    let mut b = create("pgvector", &opts).unwrap();
    b.load(&spec, train.view()).unwrap();
    let e = b
        .build(&params(json!({"M": 48, "ef_construction": 400})))
        .unwrap_err();
    assert!(
        matches!(e, annbench::Error::Backend(_))
            && e.to_string().contains("build timeout of 1ms")
            && e.to_string().contains("raise --timeout"),
        "{e}"
    );
    let mut unlimited = backend("pgvector");
    let again = unlimited.load(&spec, train.view()).unwrap();
    assert!(again.reused && again.rows == 3000, "{again:?}");
    unlimited
        .build(&params(json!({"M": 8, "ef_construction": 32})))
        .unwrap();
    let qa = params(json!({"ef_search": 10}));
    unlimited
        .verify_index_used(queries.row(0).as_slice().unwrap(), 10, &qa)
        .unwrap();
}

#[test]
fn a_cancelled_build_is_stopped_on_the_server_and_leaves_no_index() {
    let (train, queries) = data(4000, 1);
    let mut b = backend("pgvector");
    b.load(&spec("pg-cancel", Metric::Euclidean), train.view())
        .unwrap();
    let polls = std::sync::atomic::AtomicUsize::new(0);
    // Ctrl-C from the start: pg_cancel_backend is sent on every poll until the build returns.
    let cancel = || {
        polls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        true
    };
    let e = b
        .build_cancellable(&params(json!({"M": 48, "ef_construction": 400})), &cancel)
        .unwrap_err();
    assert!(matches!(e, annbench::Error::Interrupted), "{e:?}");
    assert!(polls.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let q = queries.row(0).to_vec();
    let qa = params(json!({"ef_search": 10}));
    let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
    assert!(e.contains("does not use the HNSW index"), "{e}");
    b.build(&params(json!({"M": 8, "ef_construction": 32})))
        .unwrap();
    b.verify_index_used(&q, 10, &qa).unwrap();
}

#[test]
fn builds_report_progress_and_the_graph_memory_is_planned() {
    let (train, _) = data(3000, 0);
    let mut b = backend("pgvector");
    b.load(&spec("pg-progress", Metric::Euclidean), train.view())
        .unwrap();
    let small = params(json!({"M": 16, "ef_construction": 64, "maintenance_work_mem": "1MB"}));
    let plan = b.memory_plan(3000, 128, &small).unwrap().unwrap();
    // 3000 x 128 needs about 3.7 MB: 1MB is short, and the fix names the setting and a size.
    assert!(!plan.fits(), "{plan:?}");
    assert_eq!(plan.setting_bytes, 1 << 20);
    assert!(plan.fix.contains("maintenance_work_mem="), "{}", plan.fix);
    let default = params(json!({"M": 16, "ef_construction": 64}));
    let plan = b.memory_plan(3000, 128, &default).unwrap().unwrap();
    assert!(
        plan.setting_bytes > 0 && plan.setting == "maintenance_work_mem",
        "{plan:?}"
    );
    let half = backend("pgvector_halfvec")
        .memory_plan(3000, 128, &default)
        .unwrap()
        .unwrap();
    assert!(
        half.need_bytes < plan.need_bytes,
        "halfvec elements are smaller"
    );

    let watch = annbench::backend::BuildWatch::default();
    let built = b.build_watched(&small, &|| false, &watch).unwrap();
    // The plan's shortfall is what the server then says.
    assert!(
        built
            .notices
            .iter()
            .any(|n| n.contains("maintenance_work_mem")),
        "{built:?}"
    );
    let phases = watch.phases();
    assert!(
        phases.iter().any(|p| p.phase.contains("loading tuples")),
        "{phases:?}"
    );
    assert!(
        phases
            .iter()
            .all(|p| p.percent.is_none_or(|x| (0.0..=100.0).contains(&x))),
        "{phases:?}"
    );
}

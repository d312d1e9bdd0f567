//! MariaDB MHNSW backend against a real server (ANNBENCH_MARIADB_URL or scripts/databases.sh).
//! These tests fail, never skip, when no server is configured.

mod backend_util;

use annbench::Metric;
use annbench::backend::{Backend, BackendOptions, TableSpec, create};
use annbench::params::Params;
use backend_util::{HIGH_EF_RECALL, assert_bad_train_is_named, data, mean_recall, name};
use serde_json::json;

fn backend() -> Box<dyn Backend> {
    let url = annbench::connect::mariadb_url(None)
        .unwrap_or_else(|e| panic!("MariaDB tests need a server: {e}"));
    let opts = BackendOptions {
        mariadb_url: Some(url.expose().to_string()),
        ..Default::default()
    };
    create("mariadb", &opts).unwrap_or_else(|e| panic!("{e}"))
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
/// [`HIGH_EF_RECALL`]: MHNSW is approximate, so exact ids are not promised.
fn high_ef_search(metric: Metric, test: &str, build: serde_json::Value) {
    let (train, queries) = data(1500, 50);
    let mut b = backend();
    let load = b.load(&spec(test, metric), train.view()).unwrap();
    assert_eq!(load.rows, 1500);
    assert!(load.table_size_bytes.unwrap_or(0) > 0, "{load:?}");
    let built = b.build(&params(build)).unwrap();
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
    // A warm-up pass first, as the runner does (see the note on `settle` in build.rs).
    for q in queries.outer_iter() {
        s.search(q.as_slice().unwrap(), 10, &mut ids).unwrap();
    }
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
fn euclidean_recall_is_high_with_high_ef_search() {
    high_ef_search(Metric::Euclidean, "maria-l2", json!({"M": 16}));
}

#[test]
fn angular_recall_is_high_with_high_ef_search() {
    high_ef_search(Metric::Angular, "maria-cos", json!({"M": 16}));
}

#[test]
fn myisam_engine_builds_and_searches() {
    // A MyISAM index's size is read from its `#i#01` files in the server's data directory. When
    // the server runs elsewhere (e.g. a chroot) and ANNBENCH_MARIADB_DATADIR is not set, the
    // build must fail with an error that names the fix rather than report a made-up size.
    if std::env::var_os("ANNBENCH_MARIADB_DATADIR").is_none() {
        let (train, _) = data(300, 0);
        let mut b = backend();
        b.load(&spec("maria-myisam", Metric::Euclidean), train.view())
            .unwrap();
        match b.build(&params(json!({"M": 8, "engine": "MyISAM"}))) {
            Ok(r) => assert!(r.index_size_bytes > 0, "{r:?}"),
            Err(e) => assert!(e.to_string().contains("mariadb_datadir"), "{e}"),
        }
        return;
    }
    high_ef_search(
        Metric::Euclidean,
        "maria-myisam",
        json!({"M": 8, "engine": "MyISAM"}),
    );
}

#[test]
fn verify_fails_without_the_index_and_bad_input_is_named() {
    let (train, queries) = data(300, 1);
    let mut b = backend();
    b.load(&spec("maria-verify", Metric::Euclidean), train.view())
        .unwrap();
    b.build(&params(json!({"M": 4}))).unwrap();
    let q = queries.row(0).to_vec();
    let qa = params(json!({"ef_search": 10}));
    b.verify_index_used(&q, 10, &qa).unwrap();
    b.drop_index().unwrap();
    let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
    assert!(
        e.contains("does not use the vector index") && e.contains("type=ALL"),
        "{e}"
    );

    let e = b.build(&params(json!({"M": 2}))).unwrap_err().to_string();
    assert!(e.contains("M=2") && e.contains("3..=200"), "{e}");
    let mut s = b.searcher().unwrap();
    let e = s
        .set_query_args(&params(json!({"ef_search": 20000})))
        .unwrap_err()
        .to_string();
    assert!(e.contains("ef_search=20000"), "{e}");

    assert_bad_train_is_named(
        b.as_mut(),
        &spec("maria-verify", Metric::Euclidean),
        &train,
        (7, 3),
        f32::NAN,
    );
}

#[test]
fn a_table_with_the_same_data_is_reused() {
    let (train, _) = data(400, 0);
    let spec = spec("maria-reuse", Metric::Euclidean);
    let mut b = backend();
    let mut changed = train.clone();
    changed[[0, 0]] += 1.0;
    // Whatever an earlier run left, different data forces a fresh load...
    b.load(&spec, changed.view()).unwrap();
    let first = b.load(&spec, train.view()).unwrap();
    assert!(!first.reused && first.seconds > 0.0, "{first:?}");
    // ...and the same data, from a new connection, is reused with the original load figures.
    let mut b2 = backend();
    let again = b2.load(&spec, train.view()).unwrap();
    assert!(again.reused, "{again:?}");
    assert_eq!((again.seconds, again.rows), (first.seconds, 400));
    let built = b2.build(&params(json!({"M": 4}))).unwrap();
    assert!(built.index_size_bytes > 0);
}

/// A limit shorter than any build (1 ms) is always over by the time the build runs, on any
/// machine: annbench stops the build once it is safely in its copy phase (or, if it finished
/// first, refuses it), reports the timeout with its fix, and leaves the table usable.
#[test]
fn a_build_over_the_timeout_is_stopped_with_a_clear_error_and_the_table_stays_usable() {
    let (train, queries) = data(3000, 1);
    let url = annbench::connect::mariadb_url(None).unwrap();
    let opts = BackendOptions {
        mariadb_url: Some(url.expose().to_string()),
        build_timeout: Some(std::time::Duration::from_millis(1)),
        ..Default::default()
    };
    let spec = spec("maria-timeout", Metric::Euclidean);
    let mut b = create("mariadb", &opts).unwrap();
    b.load(&spec, train.view()).unwrap();
    for _ in 0..2 {
        let e = b.build(&params(json!({"M": 48}))).unwrap_err();
        assert!(matches!(e, annbench::Error::Backend(_)), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("build timeout of 1ms") && e.contains("raise --timeout"),
            "{e}"
        );
    }
    // No index is left, the rows are intact, and a build without a limit succeeds.
    let q = queries.row(0).to_vec();
    let qa = params(json!({"ef_search": 10}));
    let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
    assert!(e.contains("does not use the vector index"), "{e}");
    let mut unlimited = backend();
    let again = unlimited.load(&spec, train.view()).unwrap();
    assert!(again.reused && again.rows == 3000, "{again:?}");
    unlimited.build(&params(json!({"M": 4}))).unwrap();
    unlimited.verify_index_used(&q, 10, &qa).unwrap();
}

#[test]
fn a_cancelled_build_is_stopped_on_the_server_and_leaves_no_index() {
    let (train, queries) = data(4000, 1);
    let mut b = backend();
    b.load(&spec("maria-cancel", Metric::Euclidean), train.view())
        .unwrap();
    let polls = std::sync::atomic::AtomicUsize::new(0);
    // Ctrl-C from the start: the watcher keeps sending KILL QUERY until the build returns.
    let cancel = || {
        polls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        true
    };
    let e = b
        .build_cancellable(&params(json!({"M": 48})), &cancel)
        .unwrap_err();
    assert!(matches!(e, annbench::Error::Interrupted), "{e:?}");
    assert!(polls.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let q = queries.row(0).to_vec();
    let qa = params(json!({"ef_search": 10}));
    let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
    assert!(e.contains("does not use the vector index"), "{e}");
    // The session is still usable: the next build works.
    b.build(&params(json!({"M": 4}))).unwrap();
    b.verify_index_used(&q, 10, &qa).unwrap();
}

#[test]
fn builds_report_their_copy_progress_and_plan_the_cache() {
    let (train, _) = data(4500, 0);
    let mut b = backend();
    b.load(&spec("maria-progress", Metric::Euclidean), train.view())
        .unwrap();
    let args = params(json!({"M": 16}));
    let plan = b.memory_plan(4500, 128, &args).unwrap().unwrap();
    assert_eq!(plan.setting, "mhnsw_max_cache_size");
    assert!(plan.setting_bytes >= 1 << 20 && plan.enforced, "{plan:?}");
    // 1M x 1536 at M=16 needs gigabytes; the plan says how much and what to set.
    let big = b.memory_plan(1_000_000, 1536, &args).unwrap().unwrap();
    assert!(big.need_bytes > 3 << 30, "{big:?}");
    assert!(
        big.fix.contains("SET GLOBAL mhnsw_max_cache_size"),
        "{big:?}"
    );
    assert!(b.memory_plan(10, 128, &params(json!({"M": 1}))).is_err());

    let watch = annbench::backend::BuildWatch::default();
    let built = b.build_watched(&args, &|| false, &watch).unwrap();
    // The build spends its time copying rows into the new table, and says how far it is.
    let phases = watch.phases();
    let copy = phases.iter().find(|p| p.phase == "copy to tmp table");
    assert!(
        copy.is_some_and(|p| p.percent.is_some_and(|x| (0.0..=100.0).contains(&x))),
        "{phases:?} after {:.2} s",
        built.seconds
    );
    // The size model is within a wide margin of the server's figure even at this small size.
    let est = annbench::backend::plan::mariadb_index_bytes(4500, 128, 16) as f64;
    let got = built.index_size_bytes as f64;
    assert!(
        (0.5..2.0).contains(&(got / est)),
        "index {got} bytes, model {est}"
    );
}

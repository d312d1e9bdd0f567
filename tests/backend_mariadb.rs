//! MariaDB MHNSW backend against a real server (ANNBENCH_MARIADB_URL or scripts/databases.sh).
//! These tests fail, never skip, when no server is configured.

mod backend_util;

use annbench::Metric;
use annbench::backend::{Backend, BackendOptions, TableSpec, create};
use annbench::params::Params;
use backend_util::{data, exact, name, recall};
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

fn exact_search(metric: Metric, test: &str, build: serde_json::Value) {
    let (train, queries) = data(1500, 15);
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
    let truth = exact(metric, train.view(), queries.view(), 10);
    let mut s = b.searcher().unwrap();
    s.set_query_args(&qa).unwrap();
    let mut ids = Vec::new();
    for (q, t) in queries.outer_iter().zip(&truth) {
        s.search(q.as_slice().unwrap(), 10, &mut ids).unwrap();
        assert_eq!(ids.len(), 10);
        let r = recall(metric, train.view(), q.as_slice().unwrap(), &ids, t);
        assert_eq!(r, 1.0, "ids {ids:?} truth {t:?}");
    }
}

#[test]
fn euclidean_recall_is_exact_with_high_ef_search() {
    exact_search(Metric::Euclidean, "maria-l2", json!({"M": 16}));
}

#[test]
fn angular_recall_is_exact_with_high_ef_search() {
    exact_search(Metric::Angular, "maria-cos", json!({"M": 16}));
}

#[test]
fn myisam_engine_builds_and_searches() {
    exact_search(
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

    let e = b
        .load(
            &spec("maria-verify", Metric::Euclidean),
            train.slice(ndarray::s![.., ..64]),
        )
        .unwrap_err();
    assert!(e.to_string().contains("64 dimensions"), "{e}");
    let mut bad = train.clone();
    bad[[7, 3]] = f32::NAN;
    let e = b
        .load(&spec("maria-verify", Metric::Euclidean), bad.view())
        .unwrap_err();
    assert!(
        e.to_string().contains("row 7") && e.to_string().contains("NaN"),
        "{e}"
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

//! Redis-specific tests against the real server named by `ANNBENCH_REDIS_URL` (or the
//! `servers.env` of `scripts/databases.sh`); they fail, never skip, without one. What every
//! algorithm keeps is in `tests/contract.rs`.

use super::*;
use crate::Metric;
use crate::backend::server::{CheckReport, GIB};
use ndarray::Array2;

fn opts() -> BackendOptions {
    BackendOptions::default()
}

fn url() -> ServerUrl {
    opts()
        .url(ServerKind::Redis)
        .unwrap_or_else(|e| panic!("{e} (set ANNBENCH_REDIS_URL=redis://:PASSWORD@127.0.0.1:PORT)"))
}

fn backend() -> Redis {
    Redis::connect(&opts()).unwrap_or_else(|e| panic!("{e}"))
}

fn p(text: &str) -> Params {
    crate::params::parse(text).unwrap()
}

/// The first `n` train and `q` test rows of the bundled GloVe set (angular).
fn glove(n: usize, q: usize) -> (Array2<f32>, Array2<f32>) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/glove-twitter-25-angular.hdf5"
    );
    let d = crate::dataset::hdf5_io::open_head(std::path::Path::new(path), n, q).unwrap();
    assert_eq!(d.metric, Metric::Angular);
    (d.train, d.test)
}

fn spec(test: &str, dimension: usize) -> TableSpec {
    TableSpec {
        dataset: format!("test-redis-{test}"),
        metric: Metric::Angular,
        dimension,
    }
}

/// Mean recall@k of `s` (ann-benchmarks' rule: within the k-th true distance + 1e-3).
fn recall(s: &mut dyn Searcher, train: &Array2<f32>, test: &Array2<f32>, k: usize) -> f64 {
    let m = Metric::Angular;
    let mut ids = Vec::new();
    let mut total = 0.0;
    for q in test.outer_iter() {
        let q = q.as_slice().unwrap();
        let mut d: Vec<f32> = train
            .outer_iter()
            .map(|t| m.distance(q, t.as_slice().unwrap()))
            .collect();
        d.sort_by(f32::total_cmp);
        let limit = d[k - 1] + 1e-3;
        s.search(q, k, &mut ids).unwrap();
        assert_eq!(ids.len(), k);
        let hits = ids
            .iter()
            .filter(|&&i| m.distance(q, train.row(i as usize).as_slice().unwrap()) <= limit)
            .count();
        total += hits as f64 / k as f64;
    }
    total / test.nrows() as f64
}

#[test]
fn every_quantization_builds_what_it_names_and_sizes_follow() {
    let (train, test) = glove(1500, 50);
    let mut b = backend();
    b.load(&spec("quant", 25), train.view()).unwrap();
    let mut sizes = Vec::new();
    for (quant, vinfo, bound) in [
        ("NOQUANT", "f32", 0.95),
        ("Q8", "int8", 0.9),
        ("BIN", "bin", 0.1),
    ] {
        let built = b
            .build(&p(&format!(
                "M=16, ef_construction=200, quantization={quant}"
            )))
            .unwrap();
        let keys = b.keys(&spec("quant", 25).dataset).unwrap();
        let info = build::vinfo(&mut b.conn, &b.url, &keys.vset).unwrap();
        assert_eq!(info["quant-type"], vinfo, "{info:?}");
        assert_eq!(info["hnsw-m"], "16");
        assert_eq!(info["size"], "1500");
        let plan = b
            .verify_index_used(test.row(0).as_slice().unwrap(), 10, &p("ef_search=500"))
            .unwrap();
        assert!(
            plan.contains(&format!("quant={vinfo}")) && plan.contains("M=16"),
            "{plan}"
        );
        let mut s = b.searcher().unwrap();
        s.set_query_args(&p("ef_search=500")).unwrap();
        let r = recall(s.as_mut(), &train, &test, 10);
        assert!(r >= bound, "{quant}: recall {r}");
        b.check_index().unwrap();
        sizes.push(built.index_size_bytes);
    }
    // float32 > int8 > 1 bit per dimension: MEMORY USAGE sees the stored vectors.
    assert!(sizes[0] > sizes[1] && sizes[1] > sizes[2], "{sizes:?}");
    b.drop_index().unwrap();
    assert!(b.check_index().is_err());
}

#[test]
fn a_euclidean_dataset_is_refused_naming_the_metric() {
    let (train, _) = glove(20, 1);
    let mut b = backend();
    let e = b
        .load(
            &TableSpec {
                metric: Metric::Euclidean,
                ..spec("l2", 25)
            },
            train.view(),
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("redis: its index compares vectors by angular only")
            && e.contains("this dataset is euclidean")
            && e.contains("glove-25-angular")
            && e.contains("mariadb"),
        "{e}"
    );
}

#[test]
fn a_rebuild_by_another_session_fails_the_point_and_foreign_elements_are_errors() {
    let (train, _) = glove(300, 1);
    let mut b = backend();
    b.load(&spec("guard", 25), train.view()).unwrap();
    b.build(&p("M=8, ef_construction=50, quantization=Q8"))
        .unwrap();
    b.check_index().unwrap();
    let keys = b.keys(&spec("guard", 25).dataset).unwrap();
    let mut other = conn::connect(&url(), READ_LIMIT).unwrap();
    // An element no train row has: the searcher refuses an answer holding it.
    let q: Vec<f32> = (0..25).map(|i| if i == 3 { 1.0 } else { 0.0 }).collect();
    let mut blob = Vec::new();
    search::fp32(&q, &mut blob);
    let _: bool = redis::cmd("VADD")
        .arg(&keys.vset)
        .arg("FP32")
        .arg(&blob)
        .arg("intruder")
        .arg("Q8")
        .arg("M")
        .arg(8)
        .query(&mut other)
        .unwrap();
    let mut s = b.searcher().unwrap();
    let mut ids = Vec::new();
    let e = s.search(&q, 1, &mut ids).unwrap_err().to_string();
    assert!(
        e.contains("'intruder'") && e.contains("not a train row id"),
        "{e}"
    );
    let e = b.check_index().unwrap_err().to_string();
    assert!(
        e.contains("301 elements") && e.contains("not stored"),
        "{e}"
    );
    // Deleted and rebuilt by someone else: a new vector set (new vset-uid).
    let _: i64 = redis::cmd("DEL").arg(&keys.vset).query(&mut other).unwrap();
    let _: bool = redis::cmd("VADD")
        .arg(&keys.vset)
        .arg("FP32")
        .arg(&blob)
        .arg("0")
        .arg("Q8")
        .arg("M")
        .arg(8)
        .query(&mut other)
        .unwrap();
    let e = b.check_index().unwrap_err().to_string();
    assert!(e.contains("was rebuilt"), "{e}");
    b.drop_index().unwrap();
}

#[test]
fn connection_errors_name_the_fix_and_never_the_password() {
    let good = url();
    let mut wrong = good.expose().clone();
    wrong.set_password(Some("Zq9wrongpw")).unwrap();
    let bad = ServerUrl::parse(ServerKind::Redis, wrong.as_str()).unwrap();
    let e = match conn::connect(&bad, READ_LIMIT) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a wrong password was accepted"),
    };
    assert!(
        e.contains("refused user") && !e.contains("Zq9wrongpw"),
        "{e}"
    );
    let mut closed = good.expose().clone();
    closed.set_port(Some(1)).unwrap();
    let closed = ServerUrl::parse(ServerKind::Redis, closed.as_str()).unwrap();
    let e = match conn::connect(&closed, READ_LIMIT) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("port 1 answered"),
    };
    assert!(
        e.contains("cannot reach Redis") && e.contains("databases.sh"),
        "{e}"
    );
    // A command the server does not know, as on a server without vector sets.
    let mut c = conn::connect(&good, READ_LIMIT).unwrap();
    let e = redis::cmd("VSIMX")
        .arg("k")
        .query::<i64>(&mut c)
        .unwrap_err();
    let e = conn::redis_error(&good, "querying", e).to_string();
    assert!(e.contains("unknown command 'VSIMX'"), "{e}");
    let unknown = redis::RedisError::from((
        redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError),
        "An error was signalled by the server",
        "unknown command 'VADD', with args beginning with: 'k'".to_string(),
    ));
    let e = conn::redis_error(&good, "adding", unknown).to_string();
    assert!(
        e.contains("has no vector sets") && e.contains("Redis 8.0"),
        "{e}"
    );
}

#[test]
fn servers_check_proves_vector_sets_and_records_settings() {
    let u = url();
    let mut report = CheckReport::default();
    (DATABASE.check)(&u, &mut report, 16 * GIB).unwrap();
    assert!(
        report
            .version
            .as_deref()
            .is_some_and(|v| v.starts_with("Redis 8")),
        "{report:?}"
    );
    assert!(
        report
            .vector_support
            .as_deref()
            .is_some_and(|v| v.contains("VADD")),
        "{report:?}"
    );
    assert!(
        report.settings.iter().any(|(k, _)| k == "maxmemory"),
        "{report:?}"
    );
    assert_eq!(report.cost_sources.len(), 2, "{report:?}");
    (DATABASE.privileges)(&u, "annbench").unwrap();
    let info = (DATABASE.server_info)(&u).unwrap();
    assert!(info.version.starts_with("Redis 8."), "{info:?}");
    for s in [
        "maxmemory",
        "maxmemory-policy",
        "io-threads",
        "save",
        "appendonly",
    ] {
        assert!(info.settings.contains_key(s), "{s}: {info:?}");
    }
    let mut c = conn::connect(&u, READ_LIMIT).unwrap();
    let left: Vec<String> = redis::cmd("KEYS")
        .arg("annbench:annbench_check_*")
        .query(&mut c)
        .unwrap();
    assert!(left.is_empty(), "scratch keys left: {left:?}");
}

#[test]
fn searchers_report_the_server_process_and_vsim_counters() {
    let (train, test) = glove(200, 5);
    let mut b = backend();
    b.load(&spec("cost", 25), train.view()).unwrap();
    b.build(&p("M=8, quantization=Q8")).unwrap();
    let mut s = b.searcher().unwrap();
    assert_eq!(s.process_hint(), cost::PROCESS);
    let before = match s.statements() {
        crate::backend::cost::Statements::Counters { counters, .. } => counters,
        other => panic!("{other:?}"),
    };
    let mut ids = Vec::new();
    for q in test.outer_iter() {
        s.search(q.as_slice().unwrap(), 10, &mut ids).unwrap();
    }
    let after = match s.statements() {
        crate::backend::cost::Statements::Counters { counters, .. } => counters,
        other => panic!("{other:?}"),
    };
    assert!(after.calls >= before.calls + 5, "{before:?} {after:?}");
    assert!(after.exec_seconds > before.exec_seconds);
    b.drop_index().unwrap();
}

#[test]
fn filtered_points_query_with_vsim_filter_on_the_rows_attributes() {
    use crate::backend::filter::Attributes;
    use crate::dataset::filters::{Column, FilterKind};
    let (train, test) = glove(1000, 20);
    let n = train.nrows();
    let attr: Vec<i32> = (0..n).map(|i| ((i * 7919) % n) as i32).collect();
    let label: Vec<i32> = (0..n).map(|i| (i % 10) as i32).collect();
    let mut attrs = Attributes {
        columns: vec![
            Column {
                name: "attr".into(),
                values: attr.clone(),
            },
            Column {
                name: "label1".into(),
                values: label.clone(),
            },
        ],
        ..Attributes::default()
    };
    attrs
        .conditions
        .insert((FilterKind::Range, "0.2".into()), "attr < 200".into());
    attrs
        .conditions
        .insert((FilterKind::Label, "0.1".into()), "label1 = 3".into());
    let mut b = backend();
    b.load(&spec("filtered", 25), train.view()).unwrap();
    b.load_attributes(&attrs).unwrap();
    assert_eq!(
        b.load_attributes(&attrs).unwrap(),
        0.0,
        "kept the second time"
    );
    b.build(&p("M=16, ef_construction=200, quantization=NOQUANT"))
        .unwrap();
    let q0 = test.row(0).to_vec();
    let plan = b
        .verify_index_used(&q0, 10, &p("ef_search=200, selectivity=0.2"))
        .unwrap();
    assert!(plan.contains("FILTER '.attr < 200'"), "{plan}");
    let m = Metric::Angular;
    for (args, keep) in [
        (
            "ef_search=200, selectivity=0.2, filter_ef=100000",
            Box::new(|i: usize| attr[i] < 200) as Box<dyn Fn(usize) -> bool>,
        ),
        (
            "ef_search=200, selectivity=0.1, filter=label, filter_ef=100000",
            Box::new(|i: usize| label[i] == 3),
        ),
    ] {
        let mut s = b.searcher().unwrap();
        s.set_query_args(&p(args)).unwrap();
        let mut ids = Vec::new();
        let mut total = 0.0;
        for q in test.outer_iter() {
            let q = q.as_slice().unwrap();
            s.search(q, 10, &mut ids).unwrap();
            assert!(ids.iter().all(|&i| keep(i as usize)), "{args}: {ids:?}");
            let mut d: Vec<f32> = (0..n)
                .filter(|&i| keep(i))
                .map(|i| m.distance(q, train.row(i).as_slice().unwrap()))
                .collect();
            d.sort_by(f32::total_cmp);
            let limit = d[9] + 1e-3;
            let hits = ids
                .iter()
                .filter(|&&i| m.distance(q, train.row(i as usize).as_slice().unwrap()) <= limit)
                .count();
            total += hits as f64 / 10.0;
        }
        let r = total / test.nrows() as f64;
        assert!(r >= 0.9, "{args}: recall {r}");
    }
    // A filter the workload has no condition for is refused.
    let mut s = b.searcher().unwrap();
    let e = s
        .set_query_args(&p("selectivity=0.5"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no range filter at selectivity 0.5"), "{e}");
    b.drop_index().unwrap();
}

#[test]
fn a_second_run_on_the_same_dataset_is_refused_until_the_first_ends() {
    let (train, _) = glove(50, 1);
    let mut first = backend();
    first.load(&spec("lock", 25), train.view()).unwrap();
    let mut second = backend();
    let e = second
        .load(&spec("lock", 25), train.view())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("in use by another annbench run") && e.contains("pid="),
        "{e}"
    );
    drop(first);
    assert!(second.load(&spec("lock", 25), train.view()).unwrap().reused);
}

#[test]
fn a_run_with_restart_is_refused_before_any_work() {
    // Redis keeps no data across a restart (persistence off): `--restart` would measure an
    // empty set. Refused before the dataset is even looked up.
    let dir = tempfile::tempdir().unwrap();
    let opts = crate::runner::SweepOptions {
        dataset: "no-such-dataset".into(),
        algorithms: vec!["redis".into()],
        restart: true,
        results_dir: dir.path().join("results"),
        backend: opts(),
        ..crate::runner::SweepOptions::default()
    };
    let e = crate::runner::run_sweep(&opts, &crate::runner::NoProgress)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--restart cannot measure Redis") && e.contains("empties"),
        "{e}"
    );
    assert!(!dir.path().join("results").exists());
}

#[test]
fn streaming_runbooks_are_refused_naming_the_algorithms_that_run_them() {
    let e = backend().stream_table().err().map(|e| e.to_string());
    let e = e.unwrap_or_default();
    assert!(
        e.contains("redis does not run streaming runbooks") && e.contains("mariadb"),
        "{e}"
    );
}

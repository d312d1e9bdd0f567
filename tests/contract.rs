//! The contract every registered algorithm with a database keeps, against the real servers:
//! each scenario runs for every entry of `annbench::backend::ALGORITHMS`, so a new algorithm
//! gets all of them from its registry line and the points it declares
//! ([`annbench::backend::spec::Contract`]). The per-database files (`backend_mariadb.rs`,
//! `backend_pgvector.rs`) keep only what is specific to one database. Every bound has a wide
//! margin: an approximate index may answer differently on a rerun. Fails, never skips, without
//! servers.

mod backend_util;

use annbench::Metric;
use annbench::backend::spec::Algorithm;
use annbench::backend::{ALGORITHMS, Backend, BackendOptions, TableSpec};
use annbench::params::{Params, parse};
use backend_util::{HIGH_EF_RECALL, assert_bad_train_is_named, bundled, name, searcher_recall};
use ndarray::Array2;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Run `scenario` for every algorithm with a database; report every failure, not the first.
fn for_each(scenario: impl Fn(&'static Algorithm)) {
    let mut failed = Vec::new();
    for a in ALGORITHMS.iter().filter(|a| a.database.is_some()) {
        if catch_unwind(AssertUnwindSafe(|| scenario(a))).is_err() {
            failed.push(a.name);
        }
    }
    assert!(failed.is_empty(), "failed for: {}", failed.join(", "));
}

fn connect(a: &Algorithm, opts: &BackendOptions) -> Box<dyn Backend> {
    (a.create)(opts)
        .unwrap_or_else(|e| panic!("{}: {e} (start servers: scripts/databases.sh up)", a.name))
}

fn backend(a: &Algorithm) -> Box<dyn Backend> {
    connect(a, &BackendOptions::default())
}

/// `preferred` when `a` declares it, else the first metric `a` takes: the scenarios whose
/// point is not the metric run on every algorithm, each with a metric its index takes.
fn metric_for(a: &Algorithm, preferred: Metric) -> Metric {
    if a.metrics.contains(&preferred) {
        preferred
    } else {
        a.metrics[0]
    }
}

fn p(text: &str) -> Params {
    parse(text).unwrap()
}

fn spec(test: &str, metric: Metric, dimension: usize) -> TableSpec {
    TableSpec {
        dataset: name(&format!("contract-{test}")),
        metric,
        dimension,
    }
}

/// Mean recall at each algorithm's declared thorough query point (ef_search at its maximum,
/// every IVF list, ...) must pass [`HIGH_EF_RECALL`] on 1500 rows: the indexes are
/// approximate, so exact ids are not promised. GloVe rows under both metrics: centred data, which every index type is meant for (SIFT's
/// non-negative values give binary quantization many identical bit codes, too many for
/// pgvector's HNSW to reach them all).
#[test]
fn recall_reaches_the_bound_at_thorough_settings() {
    for_each(|a| {
        let metrics = [
            (Metric::Euclidean, "recall-l2"),
            (Metric::Angular, "recall-cos"),
        ];
        for (metric, test) in metrics.into_iter().filter(|(m, _)| a.metrics.contains(m)) {
            let set = "glove-twitter-25-angular";
            let (train, queries, _) = bundled(set, 1500, 20);
            let mut b = backend(a);
            let load = b
                .load(&spec(test, metric, train.ncols()), train.view())
                .unwrap();
            assert_eq!(load.rows, 1500, "{}", a.name);
            assert!(
                load.table_size_bytes.unwrap_or(0) > 0,
                "{}: {load:?}",
                a.name
            );
            let built = b.build(&p(a.contract.build)).unwrap();
            assert!(
                built.seconds > 0.0 && built.index_size_bytes > 0,
                "{}: {built:?}",
                a.name
            );
            let qa = p(a.contract.thorough_query);
            b.verify_index_used(queries.row(0).as_slice().unwrap(), 10, &qa)
                .unwrap();
            let mut s = b.searcher().unwrap();
            s.set_query_args(&qa).unwrap();
            let r = searcher_recall(s.as_mut(), metric, train.view(), queries.view(), 10);
            assert!(r >= HIGH_EF_RECALL, "{} on {set}: recall {r}", a.name);
            b.drop_index().unwrap();
        }
    });
}

#[test]
fn explain_refuses_a_query_without_the_index() {
    for_each(|a| {
        let (train, queries, sift) = bundled("sift-5k-128-euclidean", 300, 1);
        let metric = metric_for(a, sift);
        let mut b = backend(a);
        b.load(&spec("explain", metric, 128), train.view()).unwrap();
        b.build(&p(a.contract.build)).unwrap();
        let q = queries.row(0).to_vec();
        let qa = p(a.contract.thorough_query);
        b.verify_index_used(&q, 10, &qa).unwrap();
        b.drop_index().unwrap();
        let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
        assert!(
            e.contains("does not use the vector index"),
            "{}: {e}",
            a.name
        );
    });
}

#[test]
fn a_table_holding_the_same_data_is_reused() {
    for_each(|a| {
        let (train, _, sift) = bundled("sift-5k-128-euclidean", 400, 1);
        let metric = metric_for(a, sift);
        let spec = spec("reuse", metric, 128);
        let mut changed = train.clone();
        changed[[3, 3]] += 1.0;
        let mut b = backend(a);
        // Whatever an earlier run left, different data forces a fresh load...
        b.load(&spec, changed.view()).unwrap();
        let first = b.load(&spec, train.view()).unwrap();
        assert!(
            !first.reused && first.seconds > 0.0,
            "{}: {first:?}",
            a.name
        );
        // ...and the same data, from a new connection, is reused with the original figures
        // (the first connection closed: it holds the table's lock while it lives).
        drop(b);
        let mut again = backend(a);
        let reused = again.load(&spec, train.view()).unwrap();
        assert!(reused.reused, "{}: {reused:?}", a.name);
        assert_eq!(
            (reused.seconds, reused.rows),
            (first.seconds, 400),
            "{}",
            a.name
        );
        assert!(again.build(&p(a.contract.build)).unwrap().index_size_bytes > 0);
    });
}

#[test]
fn timeout_and_cancel_stop_the_build_on_the_server_and_the_table_stays_usable() {
    for_each(|a| {
        let (train, queries, sift) = bundled("sift-5k-128-euclidean", 4000, 1);
        let metric = metric_for(a, sift);
        let spec = spec("stop", metric, 128);
        let q = queries.row(0).to_vec();
        let qa = p(a.contract.thorough_query);
        let opts = BackendOptions {
            build_timeout: Some(Duration::from_millis(1)),
            ..Default::default()
        };
        // A limit shorter than any build is always over by the time the build runs, on any
        // machine; twice, so that the first stop left the session and table usable.
        let mut b = connect(a, &opts);
        b.load(&spec, train.view()).unwrap();
        for _ in 0..2 {
            let e = b.build(&p(a.contract.slow_build)).unwrap_err();
            assert!(
                matches!(e, annbench::Error::Backend(_)),
                "{}: {e:?}",
                a.name
            );
            let e = e.to_string();
            assert!(
                e.contains("build timeout of 1ms") && e.contains("raise --timeout"),
                "{}: {e}",
                a.name
            );
        }
        let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
        assert!(
            e.contains("does not use the vector index"),
            "{}: {e}",
            a.name
        );

        drop(b); // frees the table's lock for the next connection
        let mut b = backend(a);
        assert!(b.load(&spec, train.view()).unwrap().reused);
        let polls = AtomicUsize::new(0);
        // Ctrl-C from the start: the stop request is sent on every poll until the build returns.
        let cancel = || {
            polls.fetch_add(1, Ordering::Relaxed);
            true
        };
        let e = b
            .build_cancellable(&p(a.contract.slow_build), &cancel)
            .unwrap_err();
        assert!(
            matches!(e, annbench::Error::Interrupted),
            "{}: {e:?}",
            a.name
        );
        assert!(polls.load(Ordering::Relaxed) > 0);
        let e = b.verify_index_used(&q, 10, &qa).unwrap_err().to_string();
        assert!(
            e.contains("does not use the vector index"),
            "{}: {e}",
            a.name
        );
        // The session and the table are still usable: the next build works.
        b.build(&p(a.contract.build)).unwrap();
        b.verify_index_used(&q, 10, &qa).unwrap();
    });
}

#[test]
fn bad_train_data_is_refused_before_anything_is_sent() {
    for_each(|a| {
        let (train, _, sift) = bundled("sift-5k-128-euclidean", 200, 1);
        let metric = metric_for(a, sift);
        let mut b = backend(a);
        let spec = spec("bad", metric, 128);
        assert_bad_train_is_named(b.as_mut(), &spec, &train, (5, 9), f32::INFINITY);
        assert_bad_train_is_named(b.as_mut(), &spec, &train, (7, 3), f32::NAN);
        let e = b
            .searcher()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("load() must run"), "{}: {e}", a.name);
    });
}

/// `rows` pseudo-random rows of `d` values in [-1, 1) from a fixed seed.
fn random(rows: usize, d: usize) -> Array2<f32> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    Array2::from_shape_fn((rows, d), |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    })
}

#[test]
fn the_declared_dimension_limit_holds_and_one_more_is_refused() {
    for_each(|a| {
        let max = a.max_dimension;
        let metric = metric_for(a, Metric::Euclidean);
        let over = random(12, max + 1);
        let mut b = backend(a);
        let e = b
            .load(&spec("dims", metric, max + 1), over.view())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("at most {max} dimensions")) && e.contains(a.name),
            "{}: {e}",
            a.name
        );
        let at = random(12, max);
        b.load(&spec("dims", metric, max), at.view()).unwrap();
        b.build(&p(a.contract.build)).unwrap();
        let mut s = b.searcher().unwrap();
        s.set_query_args(&p(a.contract.thorough_query)).unwrap();
        let mut ids = Vec::new();
        s.search(at.row(0).as_slice().unwrap(), 5, &mut ids)
            .unwrap();
        assert_eq!(ids.len(), 5, "{}", a.name);
        b.drop_index().unwrap();
    });
}

/// An algorithm whose index does not compare by a metric refuses a dataset of that metric at
/// load, naming the metric, before anything is sent (by its declared metrics).
#[test]
fn a_metric_the_index_does_not_take_is_refused_before_anything_is_sent() {
    for_each(|a| {
        let (train, _, _) = bundled("sift-5k-128-euclidean", 50, 1);
        for metric in [Metric::Euclidean, Metric::Angular] {
            if a.metrics.contains(&metric) {
                continue;
            }
            let mut b = backend(a);
            let e = b
                .load(&spec("metric", metric, 128), train.view())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(a.name) && e.contains(metric.as_str()) && e.contains("nothing was sent"),
                "{}: {e}",
                a.name
            );
            let e = b
                .searcher()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains("load() must run"), "{}: {e}", a.name);
        }
    });
}

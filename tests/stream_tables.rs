//! The writes of a streaming runbook (`Backend::stream_table`) against the real servers, for
//! every algorithm that runs them here: a stream table created empty, the index built before
//! or after the first insert as the algorithm declares, inserts on both paths, deletes,
//! replaces, maintenance, sizes, refused batches, and a stop or timeout in a large insert.
//! The sweep's table of the same dataset must come out untouched. Fails, never skips,
//! without servers.

mod backend_util;

use annbench::Error;
use annbench::backend::stream::{MaintenanceOp, StreamBuild};
use annbench::backend::{ALGORITHMS, Backend, BackendOptions, TableSpec, algorithm, create};
use annbench::params::{Params, parse};
use backend_util::{data, name};
use ndarray::{Array2, ArrayView2, s};
use std::collections::BTreeSet;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// A stop request is process-wide: the test that sends one runs alone in this binary.
static STOP: RwLock<()> = RwLock::new(());

fn backend(algo: &str) -> Box<dyn Backend> {
    create(algo, &BackendOptions::default())
        .unwrap_or_else(|e| panic!("{algo}: {e} (start servers: scripts/databases.sh up)"))
}

fn spec(test: &str) -> TableSpec {
    TableSpec {
        dataset: name(&format!("stream-{test}")),
        metric: annbench::Metric::Euclidean,
        dimension: 128,
    }
}

/// 4,500 train and 100 test rows for `algo`, and their spec: SIFT, except for binary
/// quantization, which needs centred data (SIFT's non-negative values give many rows one bit
/// code, see `contract.rs`): GloVe.
fn dataset(algo: &str, test: &str) -> (Array2<f32>, Array2<f32>, TableSpec) {
    if algo != "pgvector_binary" {
        let (train, queries) = data(4500, 100);
        return (train, queries, spec(test));
    }
    let (train, queries, metric) = backend_util::bundled("glove-twitter-25-angular", 4500, 100);
    let spec = TableSpec {
        metric,
        dimension: train.ncols(),
        ..spec(test)
    };
    (train, queries, spec)
}

fn p(text: &str) -> Params {
    parse(text).unwrap()
}

fn ids(range: std::ops::Range<usize>) -> Vec<i64> {
    range.map(|i| i as i64).collect()
}

/// The `k` ids the searcher returns for each row of `queries`.
fn answers(b: &dyn Backend, algo: &str, queries: ArrayView2<f32>, k: usize) -> Vec<Vec<i64>> {
    let mut s = b.searcher().unwrap();
    s.set_query_args(&p(algorithm(algo).unwrap().contract.thorough_query))
        .unwrap();
    let mut out = Vec::new();
    let mut ids = Vec::new();
    for q in queries.outer_iter() {
        s.search(q.as_slice().unwrap(), k, &mut ids).unwrap();
        out.push(ids.clone());
    }
    out
}

/// The first id returned for each row of `queries` holds that row's vector (itself, or a
/// duplicate of it: the data may hold equal vectors).
fn finds_itself(b: &dyn Backend, algo: &str, table: &Array2<f32>, want: &[i64]) -> usize {
    let queries = Array2::from_shape_fn((want.len(), table.ncols()), |(i, j)| {
        table[[want[i] as usize, j]]
    });
    answers(b, algo, queries.view(), 10)
        .iter()
        .zip(want)
        .filter(|(got, id)| {
            got.first()
                .is_some_and(|&first| table.row(first as usize) == table.row(**id as usize))
        })
        .count()
}

/// Insert, search, delete, replace, maintain and size a stream table of `algo`, checking
/// that the sweep's table of the same dataset is left as it was.
fn writes_and_searches(algo: &str) {
    let _alone = STOP.read().unwrap_or_else(|e| e.into_inner());
    let (train, queries, spec) = dataset(algo, &format!("rw-{algo}"));
    let sweep = train.slice(s![..200, ..]).to_owned();
    let loaded = backend(algo).load(&spec, sweep.view()).unwrap();

    let decl = algorithm(algo).unwrap();
    let build = p(decl.contract.build);
    let mut b = backend(algo);
    b.stream_table().unwrap().create_empty(&spec).unwrap();
    let st = b.stream_table().unwrap();
    assert_eq!(st.sizes().unwrap().rows, 0, "{algo}: created empty");
    // Opened before any write: each batch is committed, so this connection sees it too.
    let mut early = b.searcher().unwrap();
    let q0 = queries.row(0).to_vec();
    let thorough = p(decl.contract.thorough_query);
    if decl.stream_build == Some(StreamBuild::BeforeFirstInsert) {
        b.build(&build).unwrap();
        let plan = b.verify_index_used(&q0, 10, &thorough).unwrap();
        println!("{algo}: plan on the empty table: {plan}");
    }
    // Small, large, small batches: both insert paths.
    let mut methods = BTreeSet::new();
    for (n, range) in [(1, 0..50), (2, 50..1500), (3, 1500..1510)] {
        let st = b.stream_table().unwrap();
        let w = st
            .insert(&ids(range.clone()), train.slice(s![range.clone(), ..]))
            .unwrap();
        assert_eq!(w.rows, range.len() as u64, "{algo}: batch {n}: {w:?}");
        println!("{algo}: insert batch {n} of {} rows: {w:?}", range.len());
        methods.insert(w.method);
        if n == 1 && decl.stream_build == Some(StreamBuild::AfterFirstInsert) {
            b.build(&build).unwrap();
        }
    }
    assert_eq!(
        methods.len(),
        2,
        "{algo}: a path per batch size: {methods:?}"
    );
    let plan = b.verify_index_used(&q0, 10, &thorough).unwrap();
    println!("{algo}: plan after the inserts: {plan}");
    early.set_query_args(&thorough).unwrap();
    let mut got = Vec::new();
    early
        .search(train.row(1505).as_slice().unwrap(), 10, &mut got)
        .unwrap();
    assert_eq!(
        got.first(),
        Some(&1505),
        "{algo}: committed for every connection"
    );
    let sample: Vec<i64> = (0..1510).step_by(37).collect();
    let found = finds_itself(b.as_ref(), algo, &train, &sample);
    // An approximate index may miss a row now and then (MariaDB's MHNSW once found 40 of 41
    // under load): the guarantee is that committed rows are found, nearly all first.
    assert!(
        found + 2 >= sample.len(),
        "{algo}: inserted rows find themselves first: {found} of {}",
        sample.len()
    );
    let live: BTreeSet<i64> = (0..1510).collect();
    for a in answers(b.as_ref(), algo, queries.view(), 10) {
        assert!(
            a.len() == 10 && a.iter().all(|id| live.contains(id)),
            "{algo}: {a:?}"
        );
    }

    let w = b.stream_table().unwrap().delete(0, 300).unwrap();
    assert_eq!(w.rows, 300, "{algo}: {w:?}");
    let sizes = b.stream_table().unwrap().sizes().unwrap();
    println!("{algo}: sizes after the delete: {sizes:?}");
    assert_eq!(sizes.rows, 1210, "{algo}: {sizes:?}");
    assert!(sizes.table_bytes.unwrap_or(0) > 0 && sizes.index_bytes.unwrap_or(0) > 0);
    if algo != "mariadb" {
        assert!(sizes.dead_tuples.unwrap_or(0) > 0, "{algo}: {sizes:?}");
    }
    // The deleted rows' own vectors and the test queries: no answer holds a deleted id.
    let deleted = train.slice(s![0..300, ..]);
    for q in [deleted, queries.view()] {
        for a in answers(b.as_ref(), algo, q, 10) {
            assert!(
                a.iter().all(|&id| (300..1510).contains(&id)),
                "{algo}: {a:?}"
            );
        }
    }

    // Rows 300..340 get the vectors of rows 4000..4040, which were never inserted.
    let fresh = train.slice(s![4000..4040, ..]).to_owned();
    let w = b
        .stream_table()
        .unwrap()
        .replace(&ids(300..340), fresh.view())
        .unwrap();
    assert_eq!(w.rows, 40, "{algo}: {w:?}");
    let new = answers(b.as_ref(), algo, fresh.view(), 10);
    let old = answers(b.as_ref(), algo, train.slice(s![300..340, ..]), 10);
    for (i, (n, o)) in new.iter().zip(&old).enumerate() {
        let id = 300 + i as i64;
        assert_eq!(
            n.first(),
            Some(&id),
            "{algo}: the new vector of {id} finds it"
        );
        assert_ne!(
            o.first(),
            Some(&id),
            "{algo}: the old vector of {id} no longer does"
        );
    }

    let (supported, refused): (&[MaintenanceOp], _) = if algo == "mariadb" {
        (
            &[MaintenanceOp::Optimize, MaintenanceOp::Reindex],
            MaintenanceOp::Vacuum,
        )
    } else {
        (
            &[MaintenanceOp::Vacuum, MaintenanceOp::Reindex],
            MaintenanceOp::Optimize,
        )
    };
    for &op in supported {
        let dead = b.stream_table().unwrap().sizes().unwrap().dead_tuples;
        let m = b.stream_table().unwrap().maintenance(op).unwrap();
        println!("{algo}: {op:?}: {m:?}");
        assert!(m.seconds > 0.0 && !m.op.is_empty(), "{algo}: {m:?}");
        let after = b.stream_table().unwrap().sizes().unwrap();
        assert_eq!(after.rows, 1210, "{algo}: {op:?} keeps the rows");
        if op == MaintenanceOp::Vacuum {
            assert!(after.dead_tuples <= dead, "{algo}: {dead:?} -> {after:?}");
        }
        b.check_index().unwrap();
        b.verify_index_used(&q0, 10, &thorough).unwrap();
    }
    let e = b
        .stream_table()
        .unwrap()
        .maintenance(refused)
        .unwrap_err()
        .to_string();
    let list = supported
        .iter()
        .map(|op| op.name())
        .collect::<Vec<_>>()
        .join(", ");
    assert!(e.contains(&format!("runs {list}")), "{algo}: {e}");
    let found = finds_itself(b.as_ref(), algo, &train, &ids(340..1510)[..40]);
    assert!(
        found >= 38,
        "{algo}: rows still find themselves after maintenance: {found} of 40"
    );
    // A dropped index is still detected on the stream table.
    b.drop_index().unwrap();
    let e = b
        .verify_index_used(&q0, 10, &thorough)
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not use the vector index"), "{algo}: {e}");
    drop(b);

    let again = backend(algo).load(&spec, sweep.view()).unwrap();
    assert!(
        again.reused && again.rows == 200,
        "{algo}: sweep table touched: {again:?}"
    );
    assert_eq!(
        again.seconds, loaded.seconds,
        "{algo}: the sweep's own load"
    );
}

#[test]
fn mariadb_stream_writes() {
    writes_and_searches("mariadb");
}

#[test]
fn pgvector_stream_writes() {
    writes_and_searches("pgvector");
}

#[test]
fn pgvector_halfvec_stream_writes() {
    writes_and_searches("pgvector_halfvec");
}

#[test]
fn pgvector_ivfflat_stream_writes() {
    writes_and_searches("pgvector_ivfflat");
}

#[test]
fn pgvector_halfvec_column_stream_writes() {
    writes_and_searches("pgvector_halfvec_column");
}

#[test]
fn pgvector_binary_stream_writes() {
    writes_and_searches("pgvector_binary");
}

#[test]
fn exactly_the_streaming_algorithms_give_a_stream_table() {
    let _alone = STOP.read().unwrap_or_else(|e| e.into_inner());
    for a in ALGORITHMS.iter().filter(|a| a.database.is_some()) {
        let streams = backend(a.name).stream_table().is_ok();
        assert_eq!(streams, a.stream_build.is_some(), "{}", a.name);
    }
}

#[test]
fn bad_batches_are_refused_with_the_row_named() {
    let _alone = STOP.read().unwrap_or_else(|e| e.into_inner());
    let (train, _) = data(20, 0);
    for algo in [
        "mariadb",
        "pgvector",
        "pgvector_halfvec",
        "pgvector_ivfflat",
    ] {
        let mut b = backend(algo);
        let st = b.stream_table().unwrap();
        st.create_empty(&spec(&format!("bad-{algo}"))).unwrap();
        let e = st
            .insert(&ids(0..20), train.slice(s![.., ..64]))
            .unwrap_err();
        assert!(e.to_string().contains("64 dimensions"), "{algo}: {e}");
        let mut bad = train.clone();
        bad[[3, 5]] = f32::NAN;
        let e = st.insert(&ids(0..20), bad.view()).unwrap_err().to_string();
        assert!(e.contains("row 3") && e.contains("NaN"), "{algo}: {e}");
        let e = st.replace(&ids(0..20), bad.view()).unwrap_err().to_string();
        assert!(
            e.contains("replace batch") && e.contains("row 3"),
            "{algo}: {e}"
        );
        let e = st
            .insert(&ids(0..19), train.view())
            .unwrap_err()
            .to_string();
        assert!(e.contains("19 ids for 20 vectors"), "{algo}: {e}");
        if algo == "pgvector_halfvec" {
            let mut big = train.clone();
            big[[7, 1]] = 70000.0;
            let e = st.insert(&ids(0..20), big.view()).unwrap_err().to_string();
            assert!(e.contains("row 7") && e.contains("float16"), "{algo}: {e}");
        }
        assert_eq!(st.sizes().unwrap().rows, 0, "{algo}: nothing was sent");
        // `servers drop-tables` drops the stream table with the sweep's.
        let decl = algorithm(algo).unwrap();
        let db = decl.database.unwrap();
        let dataset = name(&format!("stream-bad-{algo}"));
        annbench::backend::drop_tables(db, &dataset, &BackendOptions::default()).unwrap();
        let e = st.sizes().unwrap_err().to_string();
        assert!(
            e.contains("stream_"),
            "{algo}: the stream table is gone: {e}"
        );
    }
}

/// `n` distinct 128-d vectors (SIFT rows, each copy shifted), enough that inserting them into
/// a graph index takes seconds.
fn many(n: usize) -> Array2<f32> {
    let (train, _) = data(4500, 0);
    Array2::from_shape_fn((n, 128), |(i, j)| {
        train[[i % 4500, j]] + (i / 4500) as f32 * 0.25
    })
}

#[test]
fn a_stop_or_the_timeout_ends_a_large_insert_and_the_backend_goes_on() {
    let _alone = STOP.write().unwrap_or_else(|e| e.into_inner());
    let big = many(60_000);
    for algo in [
        "mariadb",
        "pgvector",
        "pgvector_halfvec",
        "pgvector_ivfflat",
    ] {
        let mut b = backend(algo);
        b.stream_table()
            .unwrap()
            .create_empty(&spec(&format!("stop-{algo}")))
            .unwrap();
        b.stream_table()
            .unwrap()
            .insert(&ids(0..100), big.slice(s![0..100, ..]))
            .unwrap();
        b.build(&p(algorithm(algo).unwrap().contract.build))
            .unwrap();
        let st = b.stream_table().unwrap();

        let asked = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            annbench::backend::request_stop();
            Instant::now()
        });
        let r = st.insert(&ids(100..60_000), big.slice(s![100..60_000, ..]));
        let returned = Instant::now();
        let asked = asked.join().unwrap();
        annbench::backend::clear_stop();
        assert!(matches!(r, Err(Error::Interrupted)), "{algo}: {r:?}");
        let waited = returned.saturating_duration_since(asked);
        println!("{algo}: the insert returned {waited:?} after the stop request");
        assert!(waited < Duration::from_secs(15), "{algo}: {waited:?}");
        assert_eq!(
            st.sizes().unwrap().rows,
            100,
            "{algo}: the batch was rolled back"
        );

        st.set_timeout(Some(Duration::from_millis(50)));
        let e = st
            .insert(&ids(100..60_000), big.slice(s![100..60_000, ..]))
            .unwrap_err()
            .to_string();
        println!("{algo}: {e}");
        assert!(
            e.contains("statement timeout") && e.contains("stream_"),
            "{algo}: {e}"
        );
        st.set_timeout(None);
        assert_eq!(
            st.sizes().unwrap().rows,
            100,
            "{algo}: the batch was rolled back"
        );
        let w = st
            .insert(&ids(100..110), big.slice(s![100..110, ..]))
            .unwrap();
        assert_eq!(w.rows, 10, "{algo}: the backend goes on");
        b.check_index().unwrap();
    }
}

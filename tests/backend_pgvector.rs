//! What only the pgvector algorithms have, against a real server (ANNBENCH_POSTGRES_URL or
//! scripts/databases.sh): the halfvec column's own table and float16 range, one float32 table
//! shared by every algorithm that stores `vector`, build phases and notices, index sizes of
//! the quantized indexes, IVFFlat's `auto` lists and iterative scan, and a killed session.
//! The scenarios every algorithm shares are in `contract.rs`. They fail, never skip, without
//! a server.

mod backend_util;

use annbench::Metric;
use annbench::backend::{Backend, BackendOptions, TableSpec, create};
use annbench::connect::ServerKind;
use annbench::params::parse;
use backend_util::{bundled, data, name};

fn backend(algorithm: &str) -> Box<dyn Backend> {
    create(algorithm, &BackendOptions::default())
        .unwrap_or_else(|e| panic!("pgvector tests need a server: {e}"))
}

fn spec(test: &str, metric: Metric) -> TableSpec {
    TableSpec {
        dataset: name(test),
        metric,
        dimension: 128,
    }
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
fn one_float32_table_serves_every_algorithm_that_stores_vector() {
    let (train, _, metric) = bundled("sift-5k-128-euclidean", 400, 1);
    let spec = spec("pg-shared", metric);
    let mut changed = train.clone();
    changed[[3, 3]] += 1.0;
    let mut b = backend("pgvector");
    b.load(&spec, changed.view()).unwrap();
    let first = b.load(&spec, train.view()).unwrap();
    assert!(!first.reused, "{first:?}");
    drop(b); // frees the table's lock for the next backends
    for algorithm in ["pgvector_halfvec", "pgvector_ivfflat", "pgvector_binary"] {
        let again = backend(algorithm).load(&spec, train.view()).unwrap();
        assert!(again.reused, "{algorithm}: {again:?}");
        assert_eq!((again.seconds, again.rows), (first.seconds, 400));
    }
}

#[test]
fn build_records_phases_and_the_memory_notice() {
    let (train, _) = data(3000, 0);
    let mut b = backend("pgvector");
    b.load(&spec("pg-notice", Metric::Euclidean), train.view())
        .unwrap();
    let built = b
        .build(&parse("M=16, ef_construction=64, maintenance_work_mem=1MB").unwrap())
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
    for key in ["maintenance_work_mem", "hnsw.ef_search", "ivfflat.probes"] {
        assert!(
            info.settings.get(key).is_some_and(|v| !v.is_empty()),
            "{key}: {info:?}"
        );
    }
}

#[test]
fn quantized_indexes_are_smaller_binary_smallest() {
    let (train, _, metric) = bundled("sift-5k-128-euclidean", 2000, 1);
    let spec = spec("pg-sizes", metric);
    let build = parse("M=16, ef_construction=64").unwrap();
    let size = |algorithm: &str| {
        let mut b = backend(algorithm);
        b.load(&spec, train.view()).unwrap();
        let bytes = b.build(&build).unwrap().index_size_bytes;
        b.drop_index().unwrap();
        bytes
    };
    let (vector, half, bits) = (
        size("pgvector"),
        size("pgvector_halfvec"),
        size("pgvector_binary"),
    );
    // Per row: 512 bytes of float32, 256 of float16, 16 of bits, plus the same graph.
    assert!(bits < half && half < vector, "{bits} < {half} < {vector}");
}

#[test]
fn ivfflat_resolves_auto_lists_and_scans_iteratively() {
    let (train, queries, metric) = bundled("sift-5k-128-euclidean", 3000, 1);
    let mut b = backend("pgvector_ivfflat");
    b.load(&spec("pg-ivf", metric), train.view()).unwrap();
    // auto = rows/1000 = 3 lists, resolved by the backend too when a caller passes it.
    b.build(&parse("lists=auto*2").unwrap()).unwrap();
    let q = queries.row(0).to_vec();
    let qa = parse("probes=1, iterative_scan=relaxed_order").unwrap();
    b.verify_index_used(&q, 10, &qa).unwrap();
    let mut s = b.searcher().unwrap();
    s.set_query_args(&qa).unwrap();
    let mut ids = Vec::new();
    s.search(&q, 10, &mut ids).unwrap();
    assert_eq!(ids.len(), 10);
    let e = s
        .set_query_args(&parse("probes=0").unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("probes=0") && e.contains("1..=32768"), "{e}");
}

#[test]
fn a_killed_session_is_a_server_error_not_a_panic() {
    let (train, queries) = data(200, 1);
    let mut b = backend("pgvector");
    b.load(&spec("pg-killed", Metric::Euclidean), train.view())
        .unwrap();
    b.build(&parse("M=4, ef_construction=16").unwrap()).unwrap();
    let mut s = b.searcher().unwrap();
    let q = queries.row(0).to_vec();
    let mut ids = Vec::new();
    s.search(&q, 5, &mut ids).unwrap();
    // Terminate the searcher's backend process, found by its last query text.
    let url = annbench::connect::server_url(ServerKind::Postgres, None).unwrap();
    let mut admin = annbench::backend::postgres::server::connect(&url).unwrap();
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

/// 3072 dimensions (OpenAI's text-embedding-3-large), past the 2036 at which a float32 row
/// no longer fits a page inline: both halfvec variants load (the float32 column goes out of
/// line), build, pass the plan check and find each train row as its own nearest neighbour;
/// `pgvector` (HNSW on `vector`, at most 2000) is refused before anything is sent.
#[test]
fn halfvec_variants_take_3072_dimensions() {
    let d = 3072;
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let train = ndarray::Array2::from_shape_fn((120, d), |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    });
    let spec = TableSpec {
        dataset: name("pg-3072"),
        metric: Metric::Angular,
        dimension: d,
    };
    for algorithm in ["pgvector_halfvec", "pgvector_halfvec_column"] {
        let mut b = backend(algorithm);
        let load = b.load(&spec, train.view()).unwrap();
        assert_eq!(load.rows, 120, "{algorithm}");
        b.build(&parse("M=8, ef_construction=32").unwrap()).unwrap();
        let qa = parse("ef_search=200").unwrap();
        b.verify_index_used(train.row(0).as_slice().unwrap(), 10, &qa)
            .unwrap();
        let mut s = b.searcher().unwrap();
        s.set_query_args(&qa).unwrap();
        let mut ids = Vec::new();
        for i in [0usize, 57, 119] {
            s.search(train.row(i).as_slice().unwrap(), 10, &mut ids)
                .unwrap();
            assert_eq!((ids.len(), ids[0]), (10, i as i64), "{algorithm}: {ids:?}");
        }
        b.drop_index().unwrap();
    }
    let e = backend("pgvector")
        .load(&spec, train.view())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("at most 2000 dimensions") && e.contains("pgvector_halfvec (up to 4000)"),
        "{e}"
    );
}

#[test]
fn builds_report_progress_and_the_graph_memory_is_planned() {
    let (train, _) = data(3000, 0);
    let mut b = backend("pgvector");
    b.load(&spec("pg-progress", Metric::Euclidean), train.view())
        .unwrap();
    let small = parse("M=16, ef_construction=64, maintenance_work_mem=1MB").unwrap();
    let plan = b.memory_plan(3000, 128, &small).unwrap().unwrap();
    // 3000 x 128 needs about 3.7 MB: 1MB is short, and the fix names the setting and a size.
    assert!(!plan.fits(), "{plan:?}");
    assert_eq!(plan.setting_bytes, 1 << 20);
    assert!(plan.fix.contains("maintenance_work_mem="), "{}", plan.fix);
    let default = parse("M=16, ef_construction=64").unwrap();
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

//! The runner against the real servers. Interference needs to know which processes are
//! annbench's own database servers: found from the connections, over TCP and Unix sockets
//! (never by name alone: other servers of the same kind may run on the machine). pgvector
//! answering fewer than k ids is counted and noticed. They fail, never skip, without the
//! servers' URLs.

mod backend_util;

use annbench::Metric;
use annbench::backend::{Backend, BackendOptions, TableSpec, create};
use annbench::connect::ServerKind;
use annbench::dataset::Dataset;
use annbench::params::Params;
use annbench::runner::interference::Watcher;
use annbench::runner::{NoProgress, SweepOptions, run_sweep_with};
use backend_util::{data, name};
use serde_json::json;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn url(var: &str) -> String {
    annbench::connect::lookup(var)
        .unwrap()
        .unwrap_or_else(|| panic!("{var} is not set: run scripts/databases.sh up"))
}

fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Open a searcher on `algorithm` through `opts`, find the server from the connection, and
/// check that queries on that connection show up as that server's CPU.
fn finds_the_server(algorithm: &str, opts: BackendOptions, server_comm: &str) {
    let (train, queries) = data(2000, 50);
    let spec = TableSpec {
        dataset: name(&format!("{algorithm}-interference")),
        metric: Metric::Euclidean,
        dimension: 128,
    };
    let mut backend: Box<dyn Backend> = create(algorithm, &opts).unwrap();
    backend.load(&spec, train.view()).unwrap();
    let build: Params = match algorithm {
        "mariadb" => json!({"M": 8}),
        _ => json!({"M": 8, "ef_construction": 32}),
    }
    .as_object()
    .cloned()
    .unwrap();
    backend.build(&build).unwrap();
    let mut searcher = backend.searcher().unwrap();
    searcher
        .set_query_args(json!({"ef_search": 100}).as_object().unwrap())
        .unwrap();
    let watcher = Watcher::discover();
    let servers = watcher.servers().to_vec();
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(comm(servers[0]), server_comm);
    // Half a second of queries: the server works, and its CPU is counted as the server's.
    let a = watcher.sample().unwrap();
    let start = Instant::now();
    let mut ids = Vec::new();
    let mut i = 0;
    while start.elapsed() < Duration::from_millis(500) {
        let q = queries.row(i % queries.nrows());
        searcher
            .search(q.as_slice().unwrap(), 10, &mut ids)
            .unwrap();
        i += 1;
    }
    let b = watcher.sample().unwrap();
    let server = watcher.server_seconds(&a, &b);
    assert!(
        server > 0.02,
        "{algorithm}: server CPU {server} s over {i} queries"
    );
    let interference = watcher.between(&a, &b, None);
    assert!(interference.other_cpu_seconds.is_some(), "{interference:?}");
    drop(searcher);
    backend.drop_index().unwrap();
}

/// The tests of this file run one at a time: server discovery sees every connection of the
/// process, so another test's connection to the other server would be found too.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// One test for all four, so no other test thread holds connections while the servers are
/// found.
#[test]
fn both_servers_over_tcp_and_unix_sockets() {
    let _alone = one_at_a_time();
    let mariadb = |var: &str| BackendOptions::default().with_url(ServerKind::MariaDb, url(var));
    let postgres = |var: &str| BackendOptions::default().with_url(ServerKind::Postgres, url(var));
    finds_the_server("mariadb", mariadb("ANNBENCH_MARIADB_URL"), "mariadbd");
    finds_the_server(
        "mariadb",
        mariadb("ANNBENCH_MARIADB_SOCKET_URL"),
        "mariadbd",
    );
    finds_the_server("pgvector", postgres("ANNBENCH_POSTGRES_URL"), "postgres");
    finds_the_server(
        "pgvector",
        postgres("ANNBENCH_POSTGRES_SOCKET_URL"),
        "postgres",
    );
}

#[test]
fn pgvector_with_ef_search_below_k_answers_short_and_says_so() {
    let _alone = one_at_a_time();
    // hnsw.ef_search = 4 with iterative scans off: at most 4 ids for k = 10.
    let (train, test) = data(600, 12);
    let dataset = Dataset {
        name: name("pgvector-short"),
        metric: Metric::Euclidean,
        train,
        test,
        ground_truth: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.yml");
    std::fs::write(
        &grid,
        "algorithm: pgvector\ngroups:\n  - build: {M: 8, ef_construction: 32}\n    query: {ef_search: [4]}\n",
    )
    .unwrap();
    let opts = SweepOptions {
        dataset: dataset.name.clone(),
        algorithms: vec!["pgvector".into()],
        config_files: vec![grid],
        count: 10,
        runs: 2,
        min_time: Duration::ZERO,
        results_dir: dir.path().join("results"),
        ..SweepOptions::default()
    };
    let backend =
        BackendOptions::default().with_url(ServerKind::Postgres, url("ANNBENCH_POSTGRES_URL"));
    let summary =
        run_sweep_with(dataset, &opts, &NoProgress, &|algo| create(algo, &backend)).unwrap();
    let p = &summary.points[0].result;
    assert_eq!(p.metrics.short_results, 12);
    assert!(p.metrics.recall <= 0.4 + 1e-12, "{}", p.metrics.recall);
    assert!(
        summary
            .warnings
            .iter()
            .any(|w| w.contains("fewer than k=10 ids for 12 of 12 queries")),
        "{:?}",
        summary.warnings
    );
}

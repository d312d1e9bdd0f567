//! Both backends over the servers' Unix sockets (the `ANNBENCH_*_SOCKET_URL`s that
//! scripts/databases.sh writes): the socket is really used, the transport is recorded, and the
//! index answers as well over the socket as over TCP.
//! They fail, never skip, without those URLs.

mod backend_util;

use annbench::Metric;
use annbench::backend::{Backend, BackendOptions, TableSpec, create};
use annbench::connect::{ServerKind, ServerUrl};
use annbench::params::Params;
use backend_util::{HIGH_EF_RECALL, data, mean_recall, name};
use serde_json::json;

fn socket_url(var: &str) -> String {
    annbench::connect::lookup(var)
        .unwrap()
        .unwrap_or_else(|| panic!("{var} is not set: run scripts/databases.sh up"))
}

fn options(mariadb: Option<String>, postgres: Option<String>) -> BackendOptions {
    BackendOptions::default().with_urls([
        (ServerKind::MariaDb, mariadb),
        (ServerKind::Postgres, postgres),
    ])
}

fn params(v: serde_json::Value) -> Params {
    v.as_object().cloned().unwrap_or_default()
}

/// Load, build and search through `tcp`, then search the same index through `unix`. Each
/// backend must record its own transport, and both must answer every query with k ids at a
/// high recall. An approximate index does not promise identical ids on repeated queries, so
/// the ids are not compared one by one.
fn same_answers(algorithm: &str, tcp: BackendOptions, unix: BackendOptions, build: Params) {
    let (train, queries) = data(800, 20);
    let spec = TableSpec {
        dataset: name(&format!("{algorithm}-socket")),
        metric: Metric::Euclidean,
        dimension: 128,
    };
    let mut over_tcp: Box<dyn Backend> = create(algorithm, &tcp).unwrap();
    let mut over_unix: Box<dyn Backend> = create(algorithm, &unix).unwrap();
    let transport =
        |b: &mut Box<dyn Backend>| b.server_info().unwrap().settings["client_transport"].clone();
    assert_eq!(transport(&mut over_tcp), "tcp");
    assert_eq!(transport(&mut over_unix), "unix socket");

    over_tcp.load(&spec, train.view()).unwrap();
    over_tcp.build(&build).unwrap();
    let over_tcp_searcher = over_tcp.searcher().unwrap();
    // The first backend holds the table's lock while it lives; its searcher stays open.
    drop(over_tcp);
    // The second backend finds the same data already loaded and indexed by the first.
    let reused = over_unix.load(&spec, train.view()).unwrap();
    assert!(reused.reused, "{reused:?}");
    let qa = params(json!({"ef_search": 400}));
    over_unix
        .verify_index_used(queries.row(0).as_slice().unwrap(), 10, &qa)
        .unwrap();
    for mut s in [over_tcp_searcher, over_unix.searcher().unwrap()] {
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
        let r = mean_recall(
            Metric::Euclidean,
            train.view(),
            queries.view(),
            &answers,
            10,
        );
        assert!(r >= HIGH_EF_RECALL, "mean recall {r} at ef_search=400");
    }
}

#[test]
fn mariadb_over_its_unix_socket_answers_like_tcp() {
    use mysql::prelude::Queryable;
    let tcp = annbench::connect::server_url(ServerKind::MariaDb, None).unwrap();
    let unix = socket_url("ANNBENCH_MARIADB_SOCKET_URL");
    // The server sees a socket client as coming from localhost, a TCP one from its address.
    let parsed = ServerUrl::parse(ServerKind::MariaDb, &unix).unwrap();
    let mut c = annbench::backend::mariadb::server::connect(&parsed).unwrap();
    let me: String = c.query_first("SELECT USER()").unwrap().unwrap();
    assert!(me.ends_with("@localhost"), "{me}");
    same_answers(
        "mariadb",
        options(Some(tcp.expose().to_string()), None),
        options(Some(unix), None),
        params(json!({"M": 8})),
    );
}

#[test]
fn pgvector_over_its_unix_socket_answers_like_tcp() {
    let tcp = annbench::connect::server_url(ServerKind::Postgres, None).unwrap();
    let unix = socket_url("ANNBENCH_POSTGRES_SOCKET_URL");
    // inet_client_addr() is NULL exactly when the session came in over a Unix socket.
    let parsed = ServerUrl::parse(ServerKind::Postgres, &unix).unwrap();
    let mut c = annbench::backend::postgres::server::connect(&parsed).unwrap();
    let addr: Option<String> = c
        .query_one("SELECT inet_client_addr()::text", &[])
        .unwrap()
        .get(0);
    assert_eq!(addr, None);
    same_answers(
        "pgvector",
        options(None, Some(tcp.expose().to_string())),
        options(None, Some(unix)),
        params(json!({"M": 8, "ef_construction": 32})),
    );
}

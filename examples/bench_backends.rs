//! Client CPU per query against the median latency at the fastest grid point, with control
//! rows: one fixed query (what scripts/bench_reference_clients.py runs through the servers'
//! own C clients), the transport floor, and the floor with the server kept busy. Figures in
//! docs/bench-backends.md; load throughput is `examples/bench_load.rs`.
//!
//! ```text
//! cargo run --release --example bench_backends -- [rows] [queries]
//! ```
//! The data is generated (seeded, `support/data.rs`): Fashion-MNIST-like 784-d vectors,
//! `rows` train (default 10,000) and `queries` test vectors (default 2,000). Servers come from
//! ANNBENCH_MARIADB_URL / ANNBENCH_POSTGRES_URL. Client CPU is this thread's on-CPU time from
//! /proc/thread-self/schedstat (nanoseconds), read around a pass of queries.

#[path = "support/data.rs"]
mod data;

use annbench::backend::mariadb::{self, MariaDb};
use annbench::backend::pgvector::{Hnsw, Variant};
use annbench::backend::postgres::{self, PgBackend};
use annbench::backend::{Backend, BackendOptions, Searcher, TableSpec};
use annbench::connect::ServerKind;
use annbench::{Metric, Result};
use ndarray::Array2;
use serde_json::json;
use std::time::Instant;

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// This thread's (user, system) CPU seconds from getrusage(RUSAGE_THREAD).
fn thread_user_sys_s() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

fn params(v: serde_json::Value) -> annbench::params::Params {
    v.as_object().cloned().unwrap_or_default()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let rows: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let nq: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2_000);
    let d = 784;
    let train = data::generate(rows, d, "pixels", 20)?;
    let test = data::generate(nq, d, "pixels", 21)?;
    query_section(&BackendOptions::default(), &train, &test, d)
}

fn query_section(
    opts: &BackendOptions,
    train: &Array2<f32>,
    test: &Array2<f32>,
    d: usize,
) -> Result<()> {
    let opts = opts.clone();
    let spec = |name: &str| TableSpec {
        dataset: name.into(),
        metric: Metric::Euclidean,
        dimension: d,
    };
    let queries: Vec<Vec<f32>> = test.outer_iter().map(|r| r.to_vec()).collect();
    println!(
        "\n## Client CPU per query, {} queries, k=10 (median of {PASSES} timed passes)\n",
        queries.len()
    );
    println!(
        "| round trip | median latency ms | client CPU per query us | share of median \
         | user / kernel us | QPS (1 client) |"
    );
    println!("|---|---|---|---|---|---|");
    let mut m = MariaDb::connect(&opts)?;
    m.load(&spec("bench-query"), train.view())?;
    m.build(&params(json!({"M": 4})))?;
    // One fixed query repeated is what the servers' own C clients run in
    // scripts/bench_reference_clients.py (mariadb-slap, pgbench): the like-for-like row. It is
    // train row 0, which that script reads back from the table.
    let fixed = vec![train.row(0).to_vec(); queries.len()];
    search_rows(&mut m, "mariadb M=4 ef_search=10", &queries)?;
    search_rows(&mut m, "mariadb, one fixed query", &fixed)?;
    mariadb_floor(&queries)?;
    let mut p = PgBackend::connect(&opts, &Hnsw(Variant::Vector))?;
    p.load(&spec("bench-query"), train.view())?;
    p.build(&params(json!({"M": 8, "ef_construction": 32})))?;
    search_rows(
        &mut p,
        "pgvector m=8 ef_construction=32 ef_search=10",
        &queries,
    )?;
    search_rows(&mut p, "pgvector, one fixed query", &fixed)?;
    postgres_floor(&queries)
}

/// Timed passes per row; the row shows the pass with the median client CPU.
const PASSES: usize = 5;

/// The fastest grid point's search, as the runner issues it.
fn search_rows(b: &mut dyn Backend, name: &str, queries: &[Vec<f32>]) -> Result<()> {
    let qa = params(json!({"ef_search": 10}));
    b.verify_index_used(&queries[0], 10, &qa)?;
    let mut s: Box<dyn Searcher> = b.searcher()?;
    s.set_query_args(&qa)?;
    let mut ids = Vec::with_capacity(10);
    round_trips(name, queries, |q| s.search(q, 10, &mut ids))
}

/// The transport floor: one prepared round trip per query that carries the same vector
/// bytes and returns one row, with no index work. No synchronous client can go below it.
///
/// The second row keeps the server busy for about as long as a search (a CPU loop, no I/O)
/// while the client does exactly the same work: any client CPU it adds over the first row is
/// the cost of waiting longer (idle and wake-up of the CPU), not client work.
fn mariadb_floor(queries: &[Vec<f32>]) -> Result<()> {
    use mysql::prelude::Queryable;
    let url = annbench::connect::server_url(ServerKind::MariaDb, None)?;
    let mut c = mariadb::server::connect(&url)?;
    for (name, sql) in [
        ("mariadb floor: SELECT LENGTH(?)", "SELECT LENGTH(?)"),
        (
            "mariadb floor + server busy: SELECT LENGTH(?) + BENCHMARK(15000, 1+1)",
            "SELECT LENGTH(?) + BENCHMARK(15000, 1+1)",
        ),
    ] {
        let st = c
            .prep(sql)
            .map_err(|e| annbench::Error::Server(e.to_string()))?;
        round_trips(name, queries, |q| {
            let bytes = mariadb::search::vector_bytes(q);
            c.exec_first::<u32, _, _>(&st, (bytes,))
                .map(|_| ())
                .map_err(|e| annbench::Error::Server(e.to_string()))
        })?;
    }
    Ok(())
}

fn postgres_floor(queries: &[Vec<f32>]) -> Result<()> {
    let url = annbench::connect::server_url(ServerKind::Postgres, None)?;
    let mut c = postgres::server::connect(&url)?;
    for (name, sql) in [
        (
            "pgvector floor: SELECT vector_dims($1)",
            "SELECT vector_dims($1::vector)",
        ),
        (
            "pgvector floor + server busy: ... + count(*) of generate_series(1, 1500)",
            "SELECT vector_dims($1::vector) + (SELECT count(*) FROM generate_series(1, 1500))",
        ),
    ] {
        let st = c
            .prepare(sql)
            .map_err(|e| annbench::Error::Server(e.to_string()))?;
        round_trips(name, queries, |q| {
            let v = postgres::search::VecParam(q);
            c.query_one(&st, &[&v])
                .map(|_| ())
                .map_err(|e| annbench::Error::Server(e.to_string()))
        })?;
    }
    Ok(())
}

/// A warm-up pass, then timed passes of `one` over every query on this thread; prints the
/// pass with the median client CPU.
fn round_trips(
    name: &str,
    queries: &[Vec<f32>],
    mut one: impl FnMut(&[f32]) -> Result<()>,
) -> Result<()> {
    for q in queries {
        one(q)?;
    }
    let n = queries.len() as f64;
    let mut rows = Vec::new();
    for _ in 0..PASSES {
        let mut lat = Vec::with_capacity(queries.len());
        let cpu0 = thread_cpu_ns();
        let (u0, s0) = thread_user_sys_s();
        let wall0 = Instant::now();
        for q in queries {
            let t = Instant::now();
            one(q)?;
            lat.push(t.elapsed().as_secs_f64());
        }
        let wall = wall0.elapsed().as_secs_f64();
        let cpu = (thread_cpu_ns() - cpu0) as f64 / 1e9 / n;
        let (u1, s1) = thread_user_sys_s();
        lat.sort_by(f64::total_cmp);
        let med = lat[lat.len() / 2];
        rows.push((cpu, med, (u1 - u0) / n, (s1 - s0) / n, n / wall));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (cpu, med, user, sys, qps) = rows[rows.len() / 2];
    println!(
        "| {name} | {:.3} | {:.1} | {:.1}% | {:.1} / {:.1} | {qps:.0} |",
        med * 1e3,
        cpu * 1e6,
        100.0 * cpu / med,
        user * 1e6,
        sys * 1e6,
    );
    Ok(())
}

//! Backend benchmarks with recorded figures (docs/bench-backends.md):
//!
//! 1. load throughput of every load method on both servers (rows/s, MB/s of f32 payload),
//!    against a naive row-by-row INSERT;
//! 2. client CPU per query against the median latency at the fastest grid point.
//!
//! ```text
//! cargo run --release --example bench_backends -- /work/shared/datasets/mnist [rows] [queries]
//! ```
//! Servers come from ANNBENCH_MARIADB_URL / ANNBENCH_POSTGRES_URL. Client CPU is this thread's
//! on-CPU time from /proc/thread-self/schedstat (nanoseconds), read around a pass of queries.

use annbench::backend::mariadb::{self, MariaDb};
use annbench::backend::pgvector::{self, PgVector, Variant};
use annbench::backend::{Backend, BackendOptions, Searcher, TableSpec};
use annbench::{Metric, Result};
use ndarray::Array2;
use serde_json::json;
use std::time::Instant;

fn read_u8(path: &str, rows: usize, d: usize) -> Result<Array2<f32>> {
    let bytes = std::fs::read(path).map_err(|e| annbench::Error::io(path.as_ref(), "read", e))?;
    let n = (bytes.len() / d).min(rows);
    let v: Vec<f32> = bytes[..n * d].iter().map(|b| f32::from(*b)).collect();
    Array2::from_shape_vec((n, d), v).map_err(|e| annbench::Error::Dataset(e.to_string()))
}

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// This thread's (user, system) CPU seconds from /proc/thread-self/stat (10 ms ticks).
fn thread_user_sys_s() -> (f64, f64) {
    let s = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = s.rsplit(')').next().unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) / 100.0, tick(12) / 100.0)
}

/// Whole-process user+system CPU seconds (clock ticks of 10 ms), to catch work done on
/// other threads than the querying one.
fn process_cpu_s() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit(')').next().unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn report(server: &str, method: &str, rows: usize, d: usize, secs: f64) {
    let mb = (rows * d * 4) as f64 / 1e6;
    println!(
        "| {server} | {method} | {rows} | {secs:.2} | {:.0} | {:.1} |",
        rows as f64 / secs,
        mb / secs
    );
}

fn params(v: serde_json::Value) -> annbench::params::Params {
    v.as_object().cloned().unwrap_or_default()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .map_or("/work/shared/datasets/mnist", String::as_str);
    let rows: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let nq: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2_000);
    let d = 784;
    let train = read_u8(&format!("{dir}/base_10000x784_u8.bin"), rows, d)?;
    let test = read_u8(&format!("{dir}/query_10000x784_u8.bin"), nq, d)?;
    let opts = BackendOptions::default();

    // `BENCH=query` skips the load section (e.g. to profile the query path).
    let loads = std::env::var("BENCH").map_or(true, |v| v != "query");
    if loads {
        bench_loads(&opts, &train, d)?;
    }
    query_section(&opts, &train, &test, d)
}

fn bench_loads(opts: &BackendOptions, train: &Array2<f32>, d: usize) -> Result<()> {
    let opts = opts.clone();
    let spec = |name: &str| TableSpec {
        dataset: name.into(),
        metric: Metric::Euclidean,
        dimension: d,
    };
    println!("## Load: {} x {d} f32\n", train.nrows());
    println!("| server | method | rows | seconds | rows/s | MB/s |\n|---|---|---|---|---|---|");
    let mut m = MariaDb::connect(&opts)?;
    for (method, conns) in [
        (mariadb::LoadMethod::LoadDataBinary, 1),
        (mariadb::LoadMethod::LoadDataBinary, 2),
        (mariadb::LoadMethod::LoadDataHex, 1),
        (mariadb::LoadMethod::InsertMultiRow, 1),
        (mariadb::LoadMethod::InsertRowByRow, 1),
    ] {
        m.drop_tables("bench-load")?;
        m.load_method = method;
        m.load_connections = conns;
        let r = m.load(&spec("bench-load"), train.view())?;
        report("MariaDB", &r.method, r.rows, d, r.seconds);
    }
    m.drop_tables("bench-load")?;
    let mut p = PgVector::connect(&opts, Variant::Vector)?;
    for (method, conns) in [
        (pgvector::LoadMethod::CopyBinary, 1),
        (pgvector::LoadMethod::CopyBinary, 2),
        (pgvector::LoadMethod::InsertRowByRow, 1),
    ] {
        p.drop_table("bench-load")?;
        p.load_method = method;
        p.load_connections = conns;
        let r = p.load(&spec("bench-load"), train.view())?;
        report("PostgreSQL", &r.method, r.rows, d, r.seconds);
    }
    p.drop_table("bench-load")?;
    Ok(())
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
    println!(
        "\n## Client CPU per query, {} queries, k=10\n",
        test.nrows()
    );
    println!(
        "| backend | build | ef_search | median latency ms | client thread CPU per query us \
         | share of median | user / kernel us | process CPU per query us | QPS (1 client) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut m = MariaDb::connect(&opts)?;
    m.load(&spec("bench-query"), train.view())?;
    let mb = json!({"M": 4});
    m.build(&params(mb.clone()))?;
    query_pass(&mut m, "mariadb", &mb, test)?;
    let mut p = PgVector::connect(&opts, Variant::Vector)?;
    p.load(&spec("bench-query"), train.view())?;
    let pb = json!({"M": 8, "ef_construction": 32});
    p.build(&params(pb.clone()))?;
    query_pass(&mut p, "pgvector", &pb, test)?;
    Ok(())
}

/// A warm-up pass, then a timed pass on one connection: median latency and client CPU.
fn query_pass(
    b: &mut dyn Backend,
    name: &str,
    build: &serde_json::Value,
    test: &Array2<f32>,
) -> Result<()> {
    let qa = params(json!({"ef_search": 10}));
    let first = test.row(0).to_vec();
    b.verify_index_used(&first, 10, &qa)?;
    let mut s: Box<dyn Searcher> = b.searcher()?;
    s.set_query_args(&qa)?;
    let mut ids = Vec::with_capacity(10);
    let queries: Vec<Vec<f32>> = test.outer_iter().map(|r| r.to_vec()).collect();
    for q in &queries {
        s.search(q, 10, &mut ids)?;
    }
    let mut lat = Vec::with_capacity(queries.len());
    let cpu0 = thread_cpu_ns();
    let pcpu0 = process_cpu_s();
    let (u0, s0) = thread_user_sys_s();
    let wall0 = Instant::now();
    for q in &queries {
        let t = Instant::now();
        s.search(q, 10, &mut ids)?;
        lat.push(t.elapsed().as_secs_f64());
    }
    let cpu = (thread_cpu_ns() - cpu0) as f64 / 1e9 / queries.len() as f64;
    let pcpu = (process_cpu_s() - pcpu0) / queries.len() as f64;
    let wall = wall0.elapsed().as_secs_f64();
    let (u1, s1) = thread_user_sys_s();
    let n = queries.len() as f64;
    lat.sort_by(f64::total_cmp);
    let med = lat[lat.len() / 2];
    println!(
        "| {name} | {build} | 10 | {:.3} | {:.1} | {:.1}% | {:.1} / {:.1} | {:.1} | {:.0} |",
        med * 1e3,
        cpu * 1e6,
        100.0 * cpu / med,
        (u1 - u0) / n * 1e6,
        (s1 - s0) / n * 1e6,
        pcpu * 1e6,
        n / wall
    );
    Ok(())
}

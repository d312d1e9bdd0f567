//! Load throughput of every load method, interleaved, against ann-benchmarks' Python client
//! (figures in docs/bench-backends.md).
//!
//! Each round runs every method once, in an order rotated by one per round, into a freshly
//! created table; the table prints the median, fastest and slowest wall time per method, and
//! the server's and the client's CPU seconds (medians), which a busy machine disturbs far less
//! than wall time. The data is generated (seeded, `support/data.rs`): `pixels` like
//! Fashion-MNIST, `normal` like text embeddings.
//!
//! ```text
//! cargo build --release --example bench_load
//! eval "$(scripts/databases.sh env)"
//! target/release/examples/bench_load --rows 60000 --dim 784 --rounds 7 \
//!     --reference /tmp/ref/bin/python        # venv with `pip install mariadb numpy h5py`
//! target/release/examples/bench_load --rows 1000000 --dim 1536 --values normal --rounds 1 \
//!     --methods bulk,bulk@2,copy@2
//! ```
//! Methods: bulk, prepared, hex, loaddata, rowbyrow (MariaDB; see `LoadMethod`), copy
//! (PostgreSQL binary COPY), ref (scripts/bench_load_reference.py: mariadb-connector-python's
//! executemany); `@N` uses N connections, `+nochecks` adds
//! `SET SESSION unique_checks = 0, foreign_key_checks = 0` to the MariaDB sessions.

#[path = "support/data.rs"]
mod data;
#[path = "support/measure.rs"]
mod measure;

use annbench::backend::mariadb::LoadMethod;
use annbench::backend::mariadb::load::load_rows_with;
use annbench::backend::mariadb::server::connect as connect_mariadb;
use annbench::backend::pgvector::{Hnsw, Variant};
use annbench::backend::postgres::{self, PgBackend};
use annbench::backend::{Backend, BackendOptions, TableSpec};
use annbench::connect::ServerKind;
use annbench::{Error, Metric, Result};
use clap::Parser;
use measure::{Sample, Summary};
use mysql::prelude::Queryable;
use ndarray::{Array2, ArrayView2};
use std::path::PathBuf;

#[derive(Parser)]
struct Args {
    /// Train rows to generate.
    #[arg(long, default_value_t = 60_000)]
    rows: usize,
    /// Dimension.
    #[arg(long, default_value_t = 784)]
    dim: usize,
    /// Generated values: pixels (Fashion-MNIST-like) or normal (embedding-like).
    #[arg(long, default_value = "pixels")]
    values: String,
    /// Rounds; every method runs once per round.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Comma-separated methods (see the module docs).
    #[arg(
        long,
        default_value = "ref,bulk,bulk@2,bulk+nochecks,prepared,hex,hex@2,loaddata,rowbyrow,copy,copy@2"
    )]
    methods: String,
    /// Python with mariadb, numpy and h5py installed, for the `ref` method.
    #[arg(long)]
    reference: Option<PathBuf>,
    /// Where the reference's copy of the data is written (deleted at the end).
    #[arg(long)]
    scratch: Option<PathBuf>,
}

/// One benchmarked configuration.
#[derive(Debug, Clone)]
struct Config {
    name: String,
    kind: Kind,
    connections: usize,
    nochecks: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Maria(LoadMethod),
    Copy,
    Reference,
}

fn parse_config(text: &str) -> Result<Config> {
    let (rest, nochecks) = match text.strip_suffix("+nochecks") {
        Some(r) => (r, true),
        None => (text, false),
    };
    let (method, conns) = rest.split_once('@').unwrap_or((rest, "1"));
    let connections = conns
        .parse()
        .map_err(|_| Error::Config(format!("bad connection count in '{text}'")))?;
    let kind = match method {
        "bulk" => Kind::Maria(LoadMethod::Bulk),
        "prepared" => Kind::Maria(LoadMethod::PreparedMultiRow),
        "hex" => Kind::Maria(LoadMethod::InsertHex),
        "loaddata" => Kind::Maria(LoadMethod::LoadDataBinary),
        "rowbyrow" => Kind::Maria(LoadMethod::InsertRowByRow),
        "copy" => Kind::Copy,
        "ref" => Kind::Reference,
        _ => return Err(Error::Config(format!("unknown method '{method}'"))),
    };
    Ok(Config {
        name: text.to_string(),
        kind,
        connections,
        nochecks,
    })
}

fn main() -> Result<()> {
    let args = Args::parse();
    let configs: Vec<Config> = args
        .methods
        .split(',')
        .map(parse_config)
        .collect::<Result<_>>()?;
    let train = data::generate(args.rows, args.dim, &args.values, 20)?;
    let url = annbench::connect::server_url(ServerKind::MariaDb, None)?;
    let mut admin = connect_mariadb(&url)?;
    let version: String = admin
        .query_first("SELECT VERSION()")
        .map_err(|e| Error::Server(e.to_string()))?
        .unwrap_or_default();
    let server = measure::ServerCpu::find(&mut admin);
    let reference = prepare_reference(&args, &configs, &train)?;
    println!(
        "{} x {} float32 ({}), {:.1} MB of vectors; MariaDB {version}; {} CPUs; load average {}",
        args.rows,
        args.dim,
        args.values,
        (args.rows * args.dim * 4) as f64 / 1e6,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        measure::load_average()
    );
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); configs.len()];
    for round in 0..args.rounds {
        for k in 0..configs.len() {
            let i = (k + round) % configs.len();
            let c = &configs[i];
            let s = match c.kind {
                Kind::Maria(m) => maria(&url, &mut admin, &server, train.view(), m, c)?,
                Kind::Copy => copy(train.view(), c.connections)?,
                Kind::Reference => run_reference(&url, reference.as_ref(), &server)?,
            };
            eprintln!("round {round} {}: {:.3} s", c.name, s.wall);
            samples[i].push(s);
        }
    }
    if let Some((_, file)) = &reference {
        let _ = std::fs::remove_file(file);
    }
    println!("load average at the end {}\n", measure::load_average());
    Summary::print_header();
    let mb = (args.rows * args.dim * 4) as f64 / 1e6;
    for (c, s) in configs.iter().zip(&samples) {
        Summary::of(s).print(&c.name, mb);
    }
    Ok(())
}

fn maria(
    url: &annbench::connect::ServerUrl,
    admin: &mut mysql::Conn,
    server: &measure::ServerCpu,
    train: ArrayView2<'_, f32>,
    method: LoadMethod,
    c: &Config,
) -> Result<Sample> {
    let sql =
        |a: &mut mysql::Conn, q: &str| a.query_drop(q).map_err(|e| Error::Server(e.to_string()));
    sql(admin, "DROP TABLE IF EXISTS bench_load")?;
    // The table annbench's MariaDB backend creates.
    sql(
        admin,
        &format!(
            "CREATE TABLE bench_load (id INT NOT NULL PRIMARY KEY, v VECTOR({}) NOT NULL) ENGINE=InnoDB",
            train.ncols()
        ),
    )?;
    let session: &[&str] = if c.nochecks {
        &["SET SESSION unique_checks = 0, foreign_key_checks = 0"]
    } else {
        &[]
    };
    let (cpu0, srv0) = (measure::client_cpu(), server.seconds());
    let done = load_rows_with(url, "bench_load", train, method, c.connections, session)?;
    let sample = Sample {
        wall: done.seconds,
        client_cpu: Some(measure::client_cpu() - cpu0),
        server_cpu: server.since(srv0),
    };
    let n: Option<u64> = admin
        .query_first("SELECT COUNT(*) FROM bench_load")
        .map_err(|e| Error::Server(e.to_string()))?;
    if n != Some(train.nrows() as u64) {
        return Err(Error::Backend(format!("bench_load holds {n:?} rows")));
    }
    sql(admin, "DROP TABLE bench_load")?;
    Ok(sample)
}

/// PostgreSQL binary COPY through the backend (its load time includes the primary key and
/// VACUUM ANALYZE); no server CPU (one process per connection).
fn copy(train: ArrayView2<'_, f32>, connections: usize) -> Result<Sample> {
    let mut p = PgBackend::connect(&BackendOptions::default(), &Hnsw(Variant::Vector))?;
    p.drop_table("bench-load")?;
    p.load_method = postgres::LoadMethod::CopyBinary;
    p.load_connections = connections;
    let cpu0 = measure::client_cpu();
    let spec = TableSpec {
        dataset: "bench-load".into(),
        metric: Metric::Euclidean,
        dimension: train.ncols(),
    };
    let r = p.load(&spec, train)?;
    let client_cpu = measure::client_cpu() - cpu0;
    p.drop_table("bench-load")?;
    Ok(Sample {
        wall: r.seconds,
        client_cpu: Some(client_cpu),
        server_cpu: None,
    })
}

/// The Python for the reference and the HDF5 copy of the data it reads.
fn prepare_reference(
    args: &Args,
    configs: &[Config],
    train: &Array2<f32>,
) -> Result<Option<(PathBuf, PathBuf)>> {
    if !configs.iter().any(|c| matches!(c.kind, Kind::Reference)) {
        return Ok(None);
    }
    let python = args.reference.clone().ok_or_else(|| {
        Error::Config(
            "method 'ref' needs --reference PYTHON (a venv with `pip install mariadb numpy h5py`)"
                .into(),
        )
    })?;
    let dir = args
        .scratch
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("annbench-bench-load"));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create", e))?;
    let file = dir.join("bench-load.hdf5");
    let ds = annbench::dataset::Dataset {
        name: "bench-load".into(),
        metric: Metric::Euclidean,
        train: train.clone(),
        test: train.slice(ndarray::s![..1, ..]).to_owned(),
        ground_truth: None,
    };
    annbench::dataset::save(&ds, &file)?;
    Ok(Some((python, file)))
}

fn run_reference(
    url: &annbench::connect::ServerUrl,
    reference: Option<&(PathBuf, PathBuf)>,
    server: &measure::ServerCpu,
) -> Result<Sample> {
    let (python, file) = reference.ok_or_else(|| Error::Config("no reference".into()))?;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/bench_load_reference.py"
    );
    let srv0 = server.seconds();
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(file)
        .env("ANNBENCH_MARIADB_URL", url.expose().as_str())
        .output()
        .map_err(|e| Error::Config(format!("cannot run {}: {e}", python.display())))?;
    let server_cpu = server.since(srv0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|_| {
        Error::Backend(format!(
            "the reference failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    })?;
    let field = |k: &str| {
        v[k].as_f64()
            .ok_or_else(|| Error::Backend(format!("no {k} in {v}")))
    };
    eprintln!(
        "  reference: insert {:.3} s (ann-benchmarks' figure), with COMMIT {:.3} s",
        field("insert_seconds")?,
        field("seconds")?
    );
    Ok(Sample {
        wall: field("seconds")?,
        client_cpu: Some(field("client_cpu_seconds")?),
        // Includes the reference's CREATE and DROP TABLE (a few milliseconds).
        server_cpu,
    })
}
